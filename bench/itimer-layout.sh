#!/usr/bin/env bash
# Why `--method itimer` and its single-threaded C reference differ: the reference in
# tickscope's thread layout, with tickscope's old handler, and tickscope itself, interleaved
# (bench/ref/itimer.c describes the variants). Same settings as bench/references.sh:
# SCHED_FIFO 90, 1 ms, memory locked, /dev/cpu_dma_latency 0; measuring thread on CPU CPU,
# other threads on CPU 0 (tickscope: its housekeeping CPU).
#
#   bench/itimer-layout.sh [WAKEUPS_PER_RUN] [ROUNDS]     (defaults: 3000, 7)
#   VARIANTS="single:plain tickscope" ...    only these (default: all five below)
#   BEFORE=/path/to/tickscope ...            also a variant `before` run with that binary
#   TRACE=1 ...                              each run in a private tracefs instance: per run
#                                            where the time goes (see below)
#   CPU=1 ...                                the measuring CPU (default: the last)
#
# Variants: single:plain (the reference of bench/references.sh), threads:plain (tickscope's
# layout), threads-busy:plain (and a second thread that maps and unmaps 1 MiB every 20 ms),
# threads:tid (and gettid+getpid before the clock read in the handler), tickscope.
# Prints each run's p50/p99/max, then per variant min/median/max over the rounds and the
# ratio of its median p50 to single:plain's, and the load average before and after.
# With TRACE=1 each run also prints the medians over its wake-ups of: the CPU the interval
# timer fired on, irq (the kernel's expiry to it_real_fn's interrupt, its `now`), wake (to
# the measuring thread's re-arm of the timer in dequeue_signal, hrtimer_start), deliver (to
# signal_deliver), stamp (to the handler's clock read) — trace times have 1 µs steps — and
# grid (the kernel's expiry minus the program's: what setitimer's relative start adds to
# every wake-up of the run).
# Needs root, cc, python3, taskset; each run is bounded (timeout); a trace instance is removed
# on exit.
set -euo pipefail
n=${1:-3000}
rounds=${2:-7}
variants=${VARIANTS:-single:plain threads:plain threads-busy:plain threads:tid tickscope}
[ -n "${BEFORE:-}" ] && variants="$variants before"
cpu=${CPU:-$(($(nproc) - 1))}
here=$(cd "$(dirname "$0")/.." && pwd)
for tool in cc python3 taskset; do
  command -v "$tool" >/dev/null || { echo "itimer-layout.sh: missing $tool" >&2; exit 2; }
done
[ "$(id -u)" = 0 ] || { echo "itimer-layout.sh: needs root (SCHED_FIFO 90): run it with sudo" >&2; exit 2; }
[ "$cpu" -gt 0 ] || { echo "itimer-layout.sh: needs 2 CPUs (CPU 0 for the other threads)" >&2; exit 2; }
cargo build --profile profiling --manifest-path "$here/Cargo.toml" -q -p tickscope-cli
ts="$here/target/profiling/tickscope"
work=$(mktemp -d)
tracing=/sys/kernel/tracing
inst=
cleanup() {
  if [ -n "$inst" ] && [ -d "$inst" ]; then
    echo 0 > "$inst/tracing_on"
    rmdir "$inst"
  fi
  rm -rf "$work"
}
trap cleanup EXIT
if [ "${TRACE:-0}" = 1 ]; then
  [ -d "$tracing/instances" ] || { echo "itimer-layout.sh: TRACE=1 needs tracefs at $tracing" >&2; exit 2; }
  inst="$tracing/instances/tickscope-itimer-layout-$$"
  mkdir "$inst"
  echo 8192 > "$inst/buffer_size_kb"
  echo mono > "$inst/trace_clock"
  for e in timer/hrtimer_start timer/hrtimer_expire_entry signal/signal_deliver; do
    echo 1 > "$inst/events/$e/enable"
  done
fi
cc -O2 -pthread -o "$work/itimer-ref" "$here/bench/ref/itimer.c"
limit=$(( n / 1000 + 60 ))

# Runs variant $1; writes its wake-ups to $work/samples.csv, prints "p50 p99 max count".
run_variant() {
  local v=$1 bin=$ts
  case $v in
    tickscope|before)
      [ "$v" = before ] && bin=$BEFORE
      timeout "$limit" "$bin" run --method itimer -p 90 -a "$cpu" -i 1ms -l "$n" -q \
        --json "$work/ts.json" --samples "$work/samples.csv" >/dev/null 2>"$work/err" || return 1
      python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
run = d if "summary" in d else d["runs"][0]
s = run["summary"]
l = s["latency_ns"]
open(sys.argv[2], "w").write(str(run["threads"][0]["tid"]))
print(l["p50"], l["p99"], l["max"], s["samples"])' "$work/ts.json" "$work/samples.csv.tid" ;;
    single:*)
      DUMP="$work/samples.csv" timeout "$limit" taskset -c "$cpu" "$work/itimer-ref" 1000 "$n" 90 single "${v#*:}" ;;
    *)
      DUMP="$work/samples.csv" timeout "$limit" taskset -c "0,$cpu" "$work/itimer-ref" 1000 "$n" 90 "${v%%:*}" "${v#*:}" ;;
  esac
}

analyse() {
  python3 - "$1" "$2" "$(cat "$2.tid")" <<'PY'
import bisect, csv, re, statistics, sys
# Only this run's measuring thread: its re-arms, its timer (by address) and its signals
# (other processes may use an interval timer meanwhile).
tid = sys.argv[3]
pat = re.compile(r'^\s*.+?-(\d+)\s+\[(\d+)\]\s+\S+\s+([\d.]+):\s+(\w+):\s*(.*)$')
events = []
timer = None
for line in open(sys.argv[1]):
    m = pat.match(line)
    if not m:
        continue
    pid, cpu, name, rest = m.group(1), int(m.group(2)), m.group(4), m.group(5)
    events.append((pid, cpu, round(float(m.group(3)) * 1e9), name, rest))
    if name == 'hrtimer_start' and pid == tid and 'function=it_real_fn' in rest:
        timer = re.search(r'hrtimer=(\S+)', rest).group(1)
starts, fires, delivers = [], [], []
for pid, cpu, t, name, rest in events:
    if name == 'hrtimer_start' and f'hrtimer={timer} ' in rest:
        starts.append((t, int(re.search(r' expires=(\d+)', rest).group(1))))
    elif name == 'hrtimer_expire_entry' and f'hrtimer={timer} ' in rest:
        fires.append((t, int(re.search(r' now=(\d+)', rest).group(1)), cpu))
    elif name == 'signal_deliver' and pid == tid and 'sig=14 ' in rest:
        delivers.append(t)
rows = list(csv.DictReader(open(sys.argv[2])))
expires = sorted(e for _, e in starts)
start_t = [t for t, _ in starts]
fire_now = [now for _, now, _ in fires]
ph = {k: [] for k in ('irq', 'wake', 'deliver', 'stamp', 'grid')}
cpus = {}
for r in rows:
    e, w = int(r['expiry_ns']), int(r['woke_ns'])
    i = bisect.bisect_left(expires, e - 500_000)
    if i >= len(expires) or expires[i] - e >= 500_000:
        continue
    kexp = expires[i]
    i = bisect.bisect_left(fire_now, kexp)
    if i >= len(fires):
        continue
    ft, fnow, fcpu = fires[i]
    k = bisect.bisect_left(start_t, ft)
    d = bisect.bisect_left(delivers, ft)
    if k >= len(starts) or d >= len(delivers) or delivers[d] > w:
        continue
    cpus[fcpu] = cpus.get(fcpu, 0) + 1
    ph['grid'].append(kexp - e)
    ph['irq'].append(fnow - kexp)
    ph['wake'].append(starts[k][0] - ft)
    ph['deliver'].append(delivers[d] - starts[k][0])
    ph['stamp'].append(w - delivers[d])
cpu_text = ",".join(f"{c}:{n}" for c, n in sorted(cpus.items()))
print(f"timer-cpu={cpu_text} " + " ".join(
    f"{k}={statistics.median(v) / 1e3:.1f}" if v else f"{k}=-" for k, v in ph.items()))
PY
}

touch "$work/rows"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg); measuring CPU $cpu, $n wake-ups per run"
for r in $(seq 1 "$rounds"); do
  for v in $variants; do
    if [ -n "$inst" ]; then
      echo > "$inst/trace"
      echo 1 > "$inst/tracing_on"
    fi
    if out=$(run_variant "$v"); then
      extra=
      if [ -n "$inst" ]; then
        echo 0 > "$inst/tracing_on"
        cat "$inst/trace" > "$work/trace.txt"
        extra=$(analyse "$work/trace.txt" "$work/samples.csv")
      fi
      echo "$v $r $out $extra" >> "$work/rows"
    else
      [ -n "$inst" ] && echo 0 > "$inst/tracing_on"
      echo "$v run $r failed: $(head -c 200 "$work/err" 2>/dev/null)" >&2
    fi
  done
  echo "round $r of $rounds done (load $(cut -d' ' -f1 /proc/loadavg))" >&2
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$work/rows" "$variants" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
variants = sys.argv[2].split()
print(f"{'variant':<20} {'round':>5} {'p50 µs':>8} {'p99 µs':>8} {'max µs':>9}")
for r in rows:
    print(f"{r[0]:<20} {r[1]:>5} {int(r[2])/1e3:>8.1f} {int(r[3])/1e3:>8.1f} {int(r[4])/1e3:>9.1f}"
          + ("  " + " ".join(r[6:]) if len(r) > 6 else ""))
print()
print("per variant, µs as min / median / max over the rounds; ratio = its median p50 / single:plain's")
spread = lambda v: f"{min(v):.1f} / {statistics.median(v):.1f} / {max(v):.1f}"
base = [int(r[2]) / 1e3 for r in rows if r[0] == "single:plain"]
for v in variants:
    p50 = [int(r[2]) / 1e3 for r in rows if r[0] == v]
    p99 = [int(r[3]) / 1e3 for r in rows if r[0] == v]
    if not p50:
        print(f"{v:<20} no complete run")
        continue
    ratio = f"ratio {statistics.median(p50) / statistics.median(base):.2f}" if base else ""
    line = f"{v:<20} p50 {spread(p50):<20} p99 {spread(p99):<22} {ratio}"
    phases = {}
    for r in rows:
        if r[0] != v:
            continue
        for kv in r[6:]:
            k, _, x = kv.partition("=")
            if k != "timer-cpu" and x != "-":
                phases.setdefault(k, []).append(float(x))
    if phases:
        line += "  medians of runs: " + " ".join(f"{k} {statistics.median(x):.1f}" for k, x in phases.items())
    print(line)
PY
