#!/usr/bin/env bash
# What --explain costs, per backend, side by side with the plain run: interleaved A/B rounds
# at 1 ms and 100 µs (SCHED_FIFO 90, pinned to CPU 1), each round running plain, bpf and
# tracefs in a rotating order. Per run: whole-process CPU (user + system over wall time,
# /usr/bin/time), p50/p99 wake-up latency, peak RSS, events lost and events/s written in
# the kernel (the result's explain.cost); peak RSS is tickscope's own (VmHWM), "+children" the
# largest of it and its children (/usr/bin/time %M: with BPF, the loader helper). Printed:
# min / median / max over the rounds and
# the median difference to the plain run, with the load average before and after.
# Then, per wake-up, the events (tracefs) or BPF hits recorded on the measured CPU between
# the expiry and the thread's return from its wait, from a short run that keeps every
# wake-up's window (--explain-threshold 1ns --explain-log-events); for BPF without the
# events its decoder puts back (the local timer's entry, idle exits), which ran no program —
# the idle exit's program runs and returns at once, unrecorded.
#
# Usage: [ROUNDS=5] [SECS=10] bench/observer-cost.sh
# Needs: root (SCHED_FIFO, BPF, tracefs), python3, /usr/bin/time (apt-get install time).
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
trap 'rm -rf "$work"' EXIT

one() { # period backend round
  local p=$1 b=$2 r=$3 out="$work/$1-$2-$3"
  local flag=()
  [ "$b" != plain ] && flag=(--explain="$b")
  /usr/bin/time -f "%e %U %S %M" -o "$out.time" \
    "$TICKSCOPE" run -q -a 1 --policy fifo -p 90 -i "$p" -D "${secs}s" "${flag[@]}" \
    --json "$out.json" >/dev/null 2>"$out.err" &
  # tickscope's own peak RSS (VmHWM, read until it ends): time's %M is the largest of the
  # process and its children, and with BPF a short-lived helper child parses the kernel's BTF.
  local tp=$! hwm=0 c h
  while kill -0 "$tp" 2>/dev/null; do
    c=$(pgrep -P "$tp" | head -1 || true)
    h=$( [ -n "$c" ] && awk '/^VmHWM/ {print $2}' "/proc/$c/status" 2>/dev/null || true)
    [ -n "$h" ] && hwm=$h
    sleep 0.5
  done
  echo "$hwm" > "$out.hwm"
  wait "$tp" || { echo "run failed: $p $b: $(tail -1 "$out.err")" >&2; return 1; }
}

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for p in 1ms 100us; do
  for r in $(seq 1 "$rounds"); do
    case $((r % 3)) in
      1) order="plain bpf tracefs" ;;
      2) order="bpf tracefs plain" ;;
      0) order="tracefs plain bpf" ;;
    esac
    for b in $order; do
      echo "round $r/$rounds $p $b" >&2
      one "$p" "$b" "$r"
    done
  done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

# Events per wake-up between expiry and the return from the wait, on the measured CPU.
for b in bpf tracefs; do
  "$TICKSCOPE" run -q -a 1 --policy fifo -p 90 -i 1ms -D 2s --explain="$b" \
    --explain-threshold 1ns --explain-log "$work/events-$b.jsonl" --explain-log-events \
    --json "$work/events-$b.json" >/dev/null 2>&1 || echo "events run failed: $b" >&2
done

python3 - "$work" "$rounds" "$secs" "$load_before" "$load_after" <<'PY'
import json, os, statistics, sys
work, rounds, secs, lb, la = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
def run(p, b, r):
    base = f"{work}/{p}-{b}-{r}"
    e, u, s, m = open(base + ".time").read().split()[-4:]
    doc = json.load(open(base + ".json"))
    lat = doc["runs"][-1]["summary"]["latency_ns"] if "runs" in doc else doc["summary"]["latency_ns"]
    ex = doc.get("explain") or {}
    cost = ex.get("cost") or {}
    return {
        "cpu %": (float(u) + float(s)) / float(e) * 100,
        "p50 µs": lat["p50"] / 1e3,
        "p99 µs": lat["p99"] / 1e3,
        "RSS MiB": int(open(base + ".hwm").read()) / 1024,
        "+children": int(m) / 1024,
        "lost": cost.get("events_lost", ex.get("events_lost", 0)),
        "events/s": cost.get("events_per_s", 0.0),
    }
print(f"observer cost of --explain: {rounds} interleaved rounds of {secs} s, FIFO 90, CPU 1")
print(f"load average before {lb}, after {la}")
for p in ("1ms", "100us"):
    data = {b: [run(p, b, r) for r in range(1, rounds + 1)] for b in ("plain", "bpf", "tracefs")}
    print(f"\n{p}: min / median / max (Δ median vs plain)")
    print(f"{'':10}" + "".join(f"{b:>34}" for b in data))
    for k in data["plain"][0]:
        row = f"{k:10}"
        base = statistics.median(x[k] for x in data["plain"])
        for b, runs in data.items():
            v = [x[k] for x in runs]
            cell = f"{min(v):.2f}/{statistics.median(v):.2f}/{max(v):.2f}"
            if b != "plain":
                cell += f" ({statistics.median(v) - base:+.2f})"
            row += f"{cell:>34}"
        print(row)
def put_back(k):
    return (k["event"] == "vector_entry" and k.get("name") == "local_timer") or \
        (k["event"] == "cpu_idle" and k.get("state") is None)
print("\nper wake-up on the measured CPU between expiry and the return from the wait (1 ms, 2 s):")
for b in ("bpf", "tracefs"):
    path = f"{work}/events-{b}.jsonl"
    if not os.path.exists(path):
        print(f"  {b}: no log"); continue
    counts, kinds = [], {}
    for line in open(path):
        d = json.loads(line)
        s, cpu = d["sample"], d.get("cpu")
        inside = [e for e in d.get("events", []) if e["cpu"] == cpu and s["expiry"] <= e["ts"] <= s["woke"]]
        if b == "bpf":
            # Events the decoder puts back (bpf_records::fill_in) ran no program.
            inside = [e for e in inside if not put_back(e["kind"])]
        counts.append(len(inside))
        for e in inside:
            k = e["kind"]["event"]; kinds[k] = kinds.get(k, 0) + 1
    if counts:
        top = ", ".join(f"{k} {v / len(counts):.1f}" for k, v in sorted(kinds.items(), key=lambda x: -x[1]))
        print(f"  {b}: median {statistics.median(counts)} events over {len(counts)} wake-ups ({top})")
PY
