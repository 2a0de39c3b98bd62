#!/usr/bin/env bash
# What --explain costs, per backend, side by side with the plain run: interleaved A/B rounds
# at 1 ms and 100 µs (SCHED_FIFO 90, pinned to CPU 1), each round running plain, bpf and
# tracefs in a rotating order. Per run: whole-process CPU (user + system over wall time,
# /usr/bin/time, children included: with BPF the short-lived loader helper), p50/p99 wake-up
# latency, peak RSS, events lost and events/s written in the kernel (the result's
# explain.cost); peak RSS is tickscope's own (VmHWM), "+children" the largest of it and its
# children (/usr/bin/time %M: with BPF, the loader helper). Printed: min / median / max over
# the rounds and the median difference to the plain run, then the paired difference to the
# plain run of the same round (min / median / max), with the load average before and after.
# Where the CPU goes: every 0.5 s the script reads each tickscope thread's CPU time
# (/proc/PID/task/TID/schedstat, ns, proc(5)); from 1 s after the measuring thread appears to
# the run's last reading, "steady" is their rate — split into the measuring thread(s)
# (tickscope-N: its own work plus the BPF programs that run in its context: hrtimer_start,
# sys_exit, its switches), the collector (the main thread: polling, decoding and attributing
# windows) and other threads — and "one-time ms" is the rest of the run's CPU (start-up: BPF
# loading in the helper, facts; the end: the report, detaching), "loader ms" the part the
# BPF loader helper took (explain.cost.load_cpu_ns).
# Then, per wake-up, the events (tracefs) or BPF hits recorded on the measured CPU between
# the expiry and the thread's return from its wait, from a short run that keeps every
# wake-up's window (--explain-threshold 1ns --explain-log-events); for BPF without the
# local timer's entry, which the decoder puts back and no program ran for, but with the idle
# exit, whose program runs and returns at once (unrecorded, put back by the decoder) — each
# with its program's ns per run, measured in a separate 5 s run at 1 ms, not pinned (every
# CPU records, as the measured CPU does) with kernel.bpf_stats_enabled=1 (restored on exit;
# the statistics add their own clock reads, so ns/run is an upper bound).
#
# Usage: [ROUNDS=5] [SECS=10] [PERIODS="1ms 100us"] [BACKENDS="plain bpf tracefs"]
#        [BASELINE=/path/to/another/tickscope] bench/observer-cost.sh
# PERIODS and BACKENDS narrow a long or many-round run (plain is always run: the baseline).
# BASELINE (with bpf among the backends) adds a column `bpf-base`: the same --explain=bpf run
# by another build (e.g. the one before a change), interleaved in the same rounds, and the
# paired difference bpf − bpf-base: a change to the wake-up path measured against its
# predecessor on the same host minutes apart, rather than across sessions.
# The paired differences also give a distribution-free 95 % interval of their median (order
# statistics of the sign test; needs 6 rounds or more): many short rounds (ROUNDS=40 SECS=3)
# resolve a p50 difference that the host's drift between rounds hides in a few long ones.
# Needs: root (SCHED_FIFO, BPF, tracefs), python3, /usr/bin/time (apt-get install time);
# bpftool for the per-program ns (else that column is left out).
# Targets (issue #28): CPU <= plain + 0.5 pp at 1 ms, p50 <= +0.5 µs, p99 <= +1 µs,
# RSS <= 24 MiB, 0 lost at 100 µs.
set -euo pipefail
rounds=${ROUNDS:-5}
secs=${SECS:-10}
here=$(cd "$(dirname "$0")/.." && pwd)
[ "$(id -u)" = 0 ] || { echo "observer-cost.sh: needs root (SCHED_FIFO, BPF, tracefs)" >&2; exit 2; }
for tool in python3 /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "observer-cost.sh: missing $tool (apt-get install python3 time)" >&2; exit 2; }
done
if [ -z "${TICKSCOPE:-}" ]; then
  cargo build --release --manifest-path "$here/Cargo.toml" -q -p tickscope-cli
  TICKSCOPE="$here/target/release/tickscope"
fi
work=$(mktemp -d /tmp/tickscope-observer.XXXXXX)
stats=/proc/sys/kernel/bpf_stats_enabled
saved_stats=$(cat "$stats" 2>/dev/null || true)
run_pid=
cleanup() {
  [ -n "$run_pid" ] && kill "$run_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  [ -n "$saved_stats" ] && echo "$saved_stats" > "$stats"
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Every tickscope thread's CPU time, ns: "<seconds since epoch> <pid> <tid> <ns> <comm>".
threads() { # pid
  local now=$EPOCHREALTIME t ns rest comm
  for t in /proc/"$1"/task/*; do
    read -r ns rest 2>/dev/null < "$t/schedstat" || continue
    read -r comm 2>/dev/null < "$t/comm" || continue
    echo "$now $1 ${t##*/} $ns ${comm// /_}"
  done
}

one() { # period backend round
  local p=$1 b=$2 r=$3 out="$work/$1-$2-$3"
  local flag=() bin=$TICKSCOPE
  [ "$b" != plain ] && flag=(--explain="${b%-base}")
  [ "$b" = bpf-base ] && bin=$BASELINE
  /usr/bin/time -f "%e %U %S %M" -o "$out.time" \
    "$bin" run -q -a 1 --policy fifo -p 90 -i "$p" -D "${secs}s" "${flag[@]}" \
    --json "$out.json" >/dev/null 2>"$out.err" &
  # tickscope's own peak RSS (VmHWM, read until it ends): time's %M is the largest of the
  # process and its children, and with BPF a short-lived helper child parses the kernel's BTF.
  local tp=$! hwm=0 c h
  run_pid=$tp
  : > "$out.threads"
  while kill -0 "$tp" 2>/dev/null; do
    c=$(pgrep -P "$tp" | head -1 || true)
    if [ -n "$c" ]; then
      h=$(awk '/^VmHWM/ {print $2}' "/proc/$c/status" 2>/dev/null || true)
      [ -n "$h" ] && hwm=$h
      threads "$c" >> "$out.threads"
    fi
    sleep 0.5
  done
  echo "$hwm" > "$out.hwm"
  run_pid=
  wait "$tp" || { echo "run failed: $p $b: $(tail -1 "$out.err")" >&2; return 1; }
}

periods=${PERIODS:-1ms 100us}
backends=plain
for b in ${BACKENDS:-bpf tracefs}; do
  case $b in
    plain) ;;
    bpf|tracefs) backends="$backends $b" ;;
    *) echo "observer-cost.sh: BACKENDS: unknown backend '$b' (plain, bpf, tracefs)" >&2; exit 2 ;;
  esac
done
if [ -n "${BASELINE:-}" ]; then
  [[ " $backends " == *" bpf "* ]] || { echo "observer-cost.sh: BASELINE needs bpf in BACKENDS" >&2; exit 2; }
  [ -x "$BASELINE" ] || { echo "observer-cost.sh: BASELINE: '$BASELINE' is not an executable" >&2; exit 2; }
  backends="$backends bpf-base"
fi
for p in $periods; do
  case $p in
    *ms|*us) ;;
    *) echo "observer-cost.sh: PERIODS: '$p' is not a period like 1ms or 100us" >&2; exit 2 ;;
  esac
done
read -r -a ring <<< "$backends"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for p in $periods; do
  for r in $(seq 1 "$rounds"); do
    # Each round starts with the next backend: every backend runs first, second, … in turn.
    order=
    for i in "${!ring[@]}"; do
      order="$order ${ring[$(( (i + r - 1) % ${#ring[@]} ))]}"
    done
    for b in $order; do
      echo "round $r/$rounds $p $b" >&2
      one "$p" "$b" "$r"
    done
  done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

# Events per wake-up between expiry and the return from the wait, on the measured CPU.
for b in ${backends#plain}; do
  [ "$b" = bpf-base ] && continue
  "$TICKSCOPE" run -q -a 1 --policy fifo -p 90 -i 1ms -D 2s --explain="$b" \
    --explain-threshold 1ns --explain-log "$work/events-$b.jsonl" --explain-log-events \
    --json "$work/events-$b.json" >/dev/null 2>&1 || echo "events run failed: $b" >&2
done

# Each program's ns per run: 5 s at 1 ms, not pinned (every CPU records), statistics on.
if [[ " $backends " != *" bpf "* ]]; then
  :
elif command -v bpftool >/dev/null && [ -n "$saved_stats" ]; then
  echo 1 > "$stats"
  "$TICKSCOPE" run -q --policy fifo -p 90 -i 1ms -D 5s --explain=bpf \
    --json "$work/stats.json" >/dev/null 2>"$work/stats.err" &
  run_pid=$!
  sleep 4
  # Our programs: those the run's link descriptors hold (prog_id in /proc/PID/fdinfo).
  cat /proc/"$run_pid"/fdinfo/* 2>/dev/null | sed -n 's/^prog_id:[[:space:]]*//p' | sort -u \
    > "$work/stats.ids" || true
  bpftool prog show -j > "$work/stats.progs" 2>/dev/null || true
  wait "$run_pid" || echo "statistics run failed: $(tail -1 "$work/stats.err")" >&2
  run_pid=
  echo "$saved_stats" > "$stats"
else
  echo "per-program ns left out: needs bpftool and $stats" >&2
fi

python3 - "$work" "$rounds" "$secs" "$load_before" "$load_after" "$periods" "$backends" <<'PY'
import json, math, os, re, statistics, sys
work, rounds, secs, lb, la = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
periods, backends = sys.argv[6].split(), sys.argv[7].split()

def median_interval(d):
    """Distribution-free 95 % interval of the median of `d` (order statistics k and n-k+1,
    k the largest with P(Binomial(n, 1/2) < k) <= 2.5 %; sign test, e.g. Conover, Practical
    Nonparametric Statistics, 3rd ed. 1999, §3.2); None for fewer than 6 values."""
    n = len(d)
    if n < 6:
        return None
    s, cdf, k = sorted(d), 0.0, 0
    while True:
        cdf += math.comb(n, k) / 2 ** n
        if cdf > 0.025:
            break
        k += 1
    return (s[k - 1], s[n - k]) if k >= 1 else None

def split(path, total_cpu_s, wall_s):
    """Steady CPU % per thread class and the one-time rest, ms (see the top of the script)."""
    samples = {}  # time -> {tid: (ns, comm, pid)}
    for line in open(path):
        f = line.split()
        if len(f) == 5:
            samples.setdefault(float(f[0]), {})[int(f[2])] = (int(f[3]), f[4], int(f[1]))
    times = sorted(samples)
    # From 1 s after the measuring thread appears to the last reading that still has it (the
    # collector may work on after the measuring threads ended: that is the run's end).
    meas = [t for t in times if any(re.fullmatch(r"tickscope-\d+", v[1]) for v in samples[t].values())]
    window = [t for t in meas if t >= meas[0] + 1.0] if meas else []
    if len(window) < 2:
        return None
    a, b = window[0], window[-1]
    out = {"measuring %": 0.0, "collector %": 0.0, "other %": 0.0}
    for tid, (ns, comm, pid) in samples[b].items():
        d = ns - samples[a].get(tid, (0,))[0]
        k = "collector %" if tid == pid else \
            "measuring %" if re.fullmatch(r"tickscope-\d+", comm) else "other %"
        out[k] += d / ((b - a) * 1e9) * 100
    steady = sum(out.values())
    out = {"steady %": steady, **out}
    out["one-time ms"] = (total_cpu_s - steady / 100 * wall_s) * 1e3
    return out

def run(p, b, r):
    base = f"{work}/{p}-{b}-{r}"
    e, u, s, m = open(base + ".time").read().split()[-4:]
    doc = json.load(open(base + ".json"))
    lat = doc["runs"][-1]["summary"]["latency_ns"] if "runs" in doc else doc["summary"]["latency_ns"]
    ex = doc.get("explain") or {}
    cost = ex.get("cost") or {}
    cpu = float(u) + float(s)
    row = {
        "cpu %": cpu / float(e) * 100,
        "p50 µs": lat["p50"] / 1e3,
        "p99 µs": lat["p99"] / 1e3,
        "RSS MiB": int(open(base + ".hwm").read()) / 1024,
        "+children": int(m) / 1024,
        "lost": cost.get("events_lost", ex.get("events_lost", 0)),
        "events/s": cost.get("events_per_s", 0.0),
    }
    row.update(split(base + ".threads", cpu, float(e)) or {})
    row["loader ms"] = cost.get("load_cpu_ns", 0) / 1e6
    return row

def num(v):
    return f"{v:.0f}" if abs(v) >= 1000 else f"{v:.2f}"

print(f"observer cost of --explain: {rounds} interleaved rounds of {secs} s, FIFO 90, CPU 1")
print(f"load average before {lb}, after {la}")
for p in periods:
    data = {b: [run(p, b, r) for r in range(1, rounds + 1)] for b in backends}
    keys = [k for k in data["plain"][0]]
    for runs in data.values():
        keys += [k for x in runs for k in x if k not in keys]
    table = [[""] + list(data)]
    for k in keys:
        row = [k]
        vals = {b: [x[k] for x in runs if k in x] for b, runs in data.items()}
        base = statistics.median(vals["plain"]) if vals["plain"] else None
        for b, v in vals.items():
            if not v:
                row.append("-"); continue
            cell = f"{num(min(v))}/{num(statistics.median(v))}/{num(max(v))}"
            if b != "plain" and base is not None:
                cell += f" ({statistics.median(v) - base:+.2f})"
            row.append(cell)
        table.append(row)
    # Every column as wide as its widest cell, two spaces apart: no cell runs into the next.
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
    print(f"\n{p}: min / median / max (Δ median vs plain)")
    for r in table:
        print(r[0].ljust(widths[0]) + "".join("  " + c.rjust(w) for c, w in zip(r[1:], widths[1:])))
    # The host's noise moves every run of a round together (plain p50 spans several µs from
    # round to round): the difference to the plain run of the same round, minutes apart at
    # most, cancels that part; min / median / max over the rounds.
    print(f"{p}: paired Δ vs the plain run of the same round, min / median / max")
    for k in ("cpu %", "steady %", "p50 µs", "p99 µs"):
        cells = []
        for b in backends[1:]:
            d = [x[k] - y[k] for x, y in zip(data[b], data["plain"]) if k in x and k in y]
            ci = median_interval(d) if d else None
            cells.append((f"{b} {min(d):+.2f}/{statistics.median(d):+.2f}/{max(d):+.2f}" if d else f"{b} -")
                         + (f" (median 95 % {ci[0]:+.2f}..{ci[1]:+.2f})" if ci else ""))
        print(f"  {k.ljust(9)} " + "   ".join(cells))
    if "bpf-base" in data:
        print(f"{p}: paired Δ bpf − bpf-base (BASELINE) of the same round, min / median / max")
        for k in ("steady %", "p50 µs", "p99 µs"):
            d = [x[k] - y[k] for x, y in zip(data["bpf"], data["bpf-base"]) if k in x and k in y]
            ci = median_interval(d) if d else None
            print(f"  {k.ljust(9)} " + (f"{min(d):+.2f}/{statistics.median(d):+.2f}/{max(d):+.2f}" if d else "-")
                  + (f" (median 95 % {ci[0]:+.2f}..{ci[1]:+.2f})" if ci else ""))

# Each program's ns per run (the statistics run), by name.
ns_run = {}
try:
    ids = {int(x) for x in open(f"{work}/stats.ids").read().split()}
    for prog in json.load(open(f"{work}/stats.progs")):
        if prog.get("id") in ids and prog.get("run_cnt"):
            ns_run[prog["name"]] = prog["run_time_ns"] / prog["run_cnt"]
except (OSError, ValueError):
    pass

def program(kind):
    """The BPF program that ran for a decoded event, None for events put back without one."""
    ev, name = kind["event"], kind.get("name")
    if ev == "steal":
        return None  # read by sys_exit's program into its record, decoded as an event of its own
    if ev == "vector_entry":
        return None if name == "local_timer" else f"on_{name}_entry"
    if ev == "vector_exit":
        return f"on_{name}_exit"
    return {"hrtimer_start": "on_hrtimer_start", "hrtimer_expire_entry": "on_hrtimer_expire_entry",
            "sched_switch": "on_sched_switch", "sys_exit": "on_sys_exit", "cpu_idle": "on_cpu_idle",
            "irq_handler_entry": "on_irq_entry", "irq_handler_exit": "on_irq_exit",
            "softirq_entry": "on_softirq_entry", "softirq_exit": "on_softirq_exit",
            "page_fault": "on_page_fault_user"}.get(ev, f"on_{ev}")

def label(kind):
    ev, name = kind["event"], kind.get("name")
    if ev == "cpu_idle" and kind.get("state") is None:
        return "cpu_idle (exit: returns at once)"
    return f"{ev} ({name})" if name else ev

print("\nper wake-up on the measured CPU between expiry and the return from the wait (1 ms, 2 s):")
for b in [b for b in backends[1:] if b != "bpf-base"]:
    path = f"{work}/events-{b}.jsonl"
    if not os.path.exists(path):
        print(f"  {b}: no log"); continue
    counts, kinds, progs = [], {}, {}
    for line in open(path):
        d = json.loads(line)
        s, cpu = d["sample"], d.get("cpu")
        inside = [e for e in d.get("events", []) if e["cpu"] == cpu and s["expiry"] <= e["ts"] <= s["woke"]]
        if b == "bpf":
            inside = [e for e in inside if program(e["kind"])]
        counts.append(len(inside))
        for e in inside:
            k = label(e["kind"])
            kinds[k] = kinds.get(k, 0) + 1
            progs[k] = program(e["kind"])
    if not counts:
        continue
    n = len(counts)
    print(f"  {b}: median {statistics.median(counts)} {'BPF hits' if b == 'bpf' else 'events'} over {n} wake-ups")
    total = 0.0
    for k, v in sorted(kinds.items(), key=lambda x: -x[1]):
        per = v / n
        if b == "bpf" and progs[k] in ns_run:
            total += per * ns_run[progs[k]]
            print(f"    {k:40} {per:5.2f} per wake-up × {ns_run[progs[k]]:6.0f} ns/run ({progs[k]})")
        else:
            print(f"    {k:40} {per:5.2f} per wake-up")
    if b == "bpf" and ns_run:
        print(f"    {'sum':40} {sum(counts) / n:5.2f} hits, ≈ {total:.0f} ns per wake-up (statistics on: an upper bound)")
PY
