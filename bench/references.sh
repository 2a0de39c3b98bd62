#!/usr/bin/env bash
# Every wake-up method of `tickscope run` against an independent single-threaded C program
# that waits the same way (bench/ref/wait.c; itimer: bench/ref/itimer.c), same settings:
# SCHED_FIFO 90, both pinned to the same CPU, 1 ms, memory locked, /dev/cpu_dma_latency 0,
# timer slack 1 ns (hybrid: a fixed 100 µs margin for both). Per method, ROUNDS rounds of
# reference then tickscope, the methods interleaved within each round.
#
#   bench/references.sh [WAKEUPS_PER_RUN] [ROUNDS]     (defaults: 5000, 5)
#   METHODS="itimer timerfd" bench/references.sh       only these methods
#   CPU=1 bench/references.sh                          the CPU to pin to (default: the last)
#
# Prints each run's p50/p99/max, then per method the min/median/max over the rounds, the
# ratios of the medians (goal: p50 within ±25 %; p99 is printed with its ratio too) and the
# load average before and after. Needs root (FIFO 90), a C compiler, python3, taskset.
# Each run is bounded (timeout); busy and hybrid spin at FIFO 90 for their run's length on
# one CPU (the kernel's RT throttling leaves others ~50 ms a second).
set -euo pipefail
n=${1:-5000}
rounds=${2:-5}
methods=${METHODS:-posix-timer timerfd select poll epoll busy hybrid nanosleep-abs nanosleep-rel itimer}
cpu=${CPU:-$(($(nproc) - 1))}
here=$(cd "$(dirname "$0")/.." && pwd)
for tool in cc python3 taskset; do
  command -v "$tool" >/dev/null || { echo "references.sh: missing $tool" >&2; exit 2; }
done
[ "$(id -u)" = 0 ] || { echo "references.sh: needs root (SCHED_FIFO 90): run it with sudo" >&2; exit 2; }
cargo build --profile profiling --manifest-path "$here/Cargo.toml" -q -p tickscope-cli
ts="$here/target/profiling/tickscope"  # release code with debug info, as lightness.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -O2 -o "$work/wait-ref" "$here/bench/ref/wait.c"
cc -O2 -pthread -o "$work/itimer-ref" "$here/bench/ref/itimer.c"
limit=$(( n / 1000 + 60 ))
touch "$work/rows"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg); pinned to CPU $cpu, $n wake-ups per run"
for r in $(seq 1 "$rounds"); do
  for m in $methods; do
    extra=()
    if [ "$m" = itimer ]; then
      ref=$(timeout "$limit" taskset -c "$cpu" "$work/itimer-ref" 1000 "$n" 90) || ref="failed"
    else
      ref=$(timeout "$limit" "$work/wait-ref" "$m" 1000 "$n" 90 "$cpu" 100) || ref="failed"
    fi
    [ "$m" = hybrid ] && extra=(--margin 100us)
    echo "$m reference $r $ref" >> "$work/rows"
    if timeout "$limit" "$ts" run --method "$m" -p 90 -a "$cpu" -i 1ms -l "$n" -q "${extra[@]}" \
        --json "$work/ts.json" >/dev/null 2>"$work/err"; then
      python3 - "$work/ts.json" "$m" "$r" >> "$work/rows" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
s = d["summary"] if "summary" in d else d["runs"][0]["summary"]
l, rep = s["latency_ns"], s.get("method_report") or {}
# itimer: SIGALRMs another thread received and passed on (0: the kernel delivered each to
# the measuring thread directly).
fwd = rep.get("signals_forwarded")
print(sys.argv[2], "tickscope", sys.argv[3], l["p50"], l["p99"], l["max"], s["samples"],
      *([] if fwd is None else [f"forwarded={fwd}"]))
PY
    else
      echo "$m tickscope $r failed: $(head -c 200 "$work/err")" >&2
    fi
  done
  echo "round $r of $rounds done (load $(cut -d' ' -f1 /proc/loadavg))" >&2
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$work/rows" "$methods" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if "failed" not in l]
methods = sys.argv[2].split()
print(f"{'method':<14} {'program':<10} {'round':>5} {'p50 µs':>8} {'p99 µs':>8} {'max µs':>9}")
for r in rows:
    print(f"{r[0]:<14} {r[1]:<10} {r[2]:>5} {int(r[3])/1e3:>8.1f} {int(r[4])/1e3:>8.1f} {int(r[5])/1e3:>9.1f}"
          + (f"  {r[7]}" if len(r) > 7 else ""))
spread = lambda v: f"{min(v):.1f} / {statistics.median(v):.1f} / {max(v):.1f}"
print()
print("per method, µs as min / median / max over the rounds; ratio = tickscope's median / the reference's")
for m in methods:
    line = [f"{m:<14}"]
    for i, name in ((3, "p50"), (4, "p99")):
        col = {p: [int(r[i]) / 1e3 for r in rows if r[0] == m and r[1] == p]
               for p in ("reference", "tickscope")}
        if not col["reference"] or not col["tickscope"]:
            line.append(f"{name}: no complete round")
            continue
        ref, ts = statistics.median(col["reference"]), statistics.median(col["tickscope"])
        ratio = ts / ref if ref > 0 else float("inf")
        verdict = ""
        if name == "p50":
            verdict = " within ±25 %" if 0.75 <= ratio <= 1.25 else " OUTSIDE ±25 %"
        line.append(f"{name} ref {spread(col['reference'])} ts {spread(col['tickscope'])} "
                    f"ratio {ratio:.2f}{verdict}")
    print("  ".join(line))
PY
