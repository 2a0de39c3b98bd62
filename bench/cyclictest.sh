#!/usr/bin/env bash
# tickscope run vs cyclictest, same settings, interleaved A B A B.
#
#   bench/cyclictest.sh [SECONDS_PER_RUN] [ROUNDS]      (defaults: 10 s, 2 rounds)
#
# Both: SCHED_FIFO 90, 1 ms interval, absolute clock_nanosleep on CLOCK_MONOTONIC, one
# unpinned thread, memory locked, /dev/cpu_dma_latency held at 0 (cyclictest's default).
# Prints p50/p99/max wake-up latency of each run and the tickscope/cyclictest ratios of the
# medians over all rounds. Then counts user-space instructions per wake-up of each tool with
# valgrind --tool=callgrind: a short and a long run, differenced, so start-up cancels out.
# Needs root (FIFO 90), cyclictest (apt-get install rt-tests), valgrind, python3.
set -euo pipefail
secs=${1:-10}
rounds=${2:-2}
here=$(cd "$(dirname "$0")/.." && pwd)
# The program as it is shipped (docs/dist.md), and how stale its start-up layout is.
"$here/scripts/dist.sh"
ts="$here/target/dist/tickscope"
"$here/bench/layout-staleness.sh" "$ts"
command -v cyclictest >/dev/null || { echo "cyclictest missing: apt-get install rt-tests" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for r in $(seq 1 "$rounds"); do
  echo "round $r: cyclictest ${secs}s" >&2
  timeout $((secs + 30)) cyclictest -m -p 90 -i 1000 -D "$secs" -q -h 20000 \
    --json="$work/ct-$r.json" >/dev/null
  echo "round $r: tickscope ${secs}s" >&2
  timeout $((secs + 30)) "$ts" run -p 90 -i 1ms -D "${secs}s" -q --json "$work/ts-$r.json" >/dev/null
done

python3 - "$work" "$rounds" <<'PY'
import json, sys, statistics
work, rounds = sys.argv[1], int(sys.argv[2])

def pct_from_hist(hist, q):
    """Percentile from cyclictest's 1 µs histogram: the bucket of rank ceil(q*n)."""
    items = sorted((int(k), v) for k, v in hist.items())
    n = sum(v for _, v in items)
    rank, seen = max(1, -(-int(q * n * 1000) // 1000)), 0
    for k, v in items:
        seen += v
        if seen >= rank:
            return k * 1000.0
    return items[-1][0] * 1000.0

rows = []
for r in range(1, rounds + 1):
    ct = json.load(open(f"{work}/ct-{r}.json"))["thread"]["0"]
    ts = json.load(open(f"{work}/ts-{r}.json"))["summary"]["latency_ns"]
    rows.append(("cyclictest", r, pct_from_hist(ct["histogram"], .5), pct_from_hist(ct["histogram"], .99), ct["max"] * 1000.0))
    rows.append(("tickscope", r, ts["p50"], ts["p99"], ts["max"]))
print(f"{'tool':<11} {'round':>5} {'p50 µs':>8} {'p99 µs':>8} {'max µs':>9}")
for tool, r, p50, p99, mx in rows:
    print(f"{tool:<11} {r:>5} {p50/1e3:>8.1f} {p99/1e3:>8.1f} {mx/1e3:>9.1f}")
for i, name in ((2, "p50"), (3, "p99"), (4, "max")):
    t = statistics.median(x[i] for x in rows if x[0] == "tickscope")
    c = statistics.median(x[i] for x in rows if x[0] == "cyclictest")
    print(f"ratio tickscope/cyclictest {name}: {t / c:.2f}  (medians over rounds: {t/1e3:.1f} / {c/1e3:.1f} µs)")
print("cyclictest histogram buckets are 1 µs wide; its percentiles are bucket values.")
PY

# User-space instructions per wake-up (callgrind counts instructions, not time; under
# valgrind the vDSO is not used, so clock reads become system calls and are not counted).
# Each tool runs 500 and 2500 wake-ups; the difference over 2000 wake-ups cancels start-up.
# Thread 1 is the main thread (tickscope's collector); the measuring thread is, of the others
# (tickscope also starts a signal thread), the one that grows most with the run.
count() { awk '/^(summary|totals):/ {print $2; exit}' "$1"; }
per_wakeup() { # name command... (the loop count is appended)
  local name=$1; shift
  for n in 500 2500; do
    valgrind --tool=callgrind --separate-threads=yes \
      --callgrind-out-file="$work/$name-$n.cg" "$@" -l "$n" >/dev/null 2>&1
  done
  local total=0 thread=0 f t a b d
  for f in "$work/$name-2500.cg"-*; do
    t=${f##*-}
    a=$(count "$work/$name-500.cg-$t" 2>/dev/null || echo 0); b=$(count "$f")
    d=$((b - ${a:-0})); total=$((total + d))
    if [ "$t" != 01 ] && [ "$d" -gt "$thread" ]; then thread=$d; fi
  done
  echo "$name: measuring thread $(( thread / 2000 )) instructions per wake-up"
  echo "$name: whole process $(( total / 2000 )) instructions per wake-up"
}
echo "counting instructions with callgrind (slow)..." >&2
per_wakeup cyclictest cyclictest -m -p 90 -i 1000 -q -h 20000
per_wakeup tickscope "$ts" run -p 90 -i 1ms -q
