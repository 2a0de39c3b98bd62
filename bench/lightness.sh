#!/usr/bin/env bash
# How much tickscope disturbs what it measures, side by side with cyclictest in one run:
# user-space instructions per wake-up (measuring thread and whole process, callgrind) at 1 ms
# and 100 µs, and peak RSS for 10^4 and 10^6 wake-ups — with the ratios.
#
# Usage: [SHORT=1000 LONG=6000] bench/lightness.sh [BIG]
#        BIG: wake-ups of the long RSS run (default 1000000,
#                                      at 100 µs that is 100 s per tool)
# Needs: root (SCHED_FIFO 90), valgrind, cyclictest (apt-get install valgrind rt-tests).
set -euo pipefail
big=${1:-1000000}
here=$(cd "$(dirname "$0")/.." && pwd)
for tool in valgrind cyclictest /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "missing $tool: apt-get install valgrind rt-tests time" >&2; exit 2; }
done
cargo build --profile profiling --manifest-path "$here/Cargo.toml" -q -p tickscope-cli
ts="$here/target/profiling/tickscope"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# callgrind counts instructions, not time; under valgrind the vDSO is not used, so clock
# reads are system calls and not counted. Each tool runs SHORT and LONG wake-ups (default
# 1000 and 6000); the difference over LONG - SHORT wake-ups cancels start-up and exit. What
# start-up reads varies from run to run (tickscope scans /proc for PM QoS holders: ±0.1 M
# instructions with the number of processes), so the difference is taken over 5000 wake-ups,
# where that is ±20 per wake-up. Thread 1 is the main thread (tickscope's collector); the
# measuring thread is the other one that grows with the run.
short=${SHORT:-1000}
long=${LONG:-6000}
span=$((long - short))
count() { awk '/^(summary|totals):/ {print $2; exit}' "$1"; }
per_wakeup() { # label interval-flag-value command... (the loop count is appended)
  local label=$1; shift
  for n in "$short" "$long"; do
    timeout 600 valgrind --tool=callgrind --separate-threads=yes \
      --callgrind-out-file="$work/$label-$n.cg" "$@" -l "$n" >/dev/null 2>&1
  done
  # The measuring thread: of the threads but the first (main), the one that grew most.
  local total=0 t a b d thread=0
  for f in "$work/$label-$long.cg"-*; do
    t=${f##*-}
    a=$(count "$work/$label-$short.cg-$t"); b=$(count "$f")
    d=$((b - a)); total=$((total + d))
    if [ "$t" != 01 ] && [ $((d / span)) -gt "$thread" ]; then thread=$((d / span)); fi
  done
  echo "$label $thread $(( total / span ))"
}
rss() { # label wake-ups command... : peak RSS in KiB
  local label=$1 n=$2; shift 2
  /usr/bin/time -f "%M" -o "$work/rss" "$@" -l "$n" >/dev/null 2>&1
  echo "$label $(cat "$work/rss")"
}

echo "counting instructions (callgrind, slow) ..." >&2
{
  per_wakeup "cyclictest-1ms" cyclictest -m -p 90 -i 1000 -q -h 400
  per_wakeup "tickscope-1ms" "$ts" run -p 90 -i 1ms -q
  per_wakeup "cyclictest-100us" cyclictest -m -p 90 -i 100 -q -h 400
  per_wakeup "tickscope-100us" "$ts" run -p 90 -i 100us -q
} > "$work/instr"
echo "measuring peak RSS (10^4 and $big wake-ups at 100 µs, interleaved) ..." >&2
{
  rss "cyclictest-1e4" 10000 cyclictest -m -p 90 -i 100 -q -h 400
  rss "tickscope-1e4" 10000 "$ts" run -p 90 -i 100us -q
  rss "cyclictest-big" "$big" cyclictest -m -p 90 -i 100 -q -h 400
  rss "tickscope-big" "$big" "$ts" run -p 90 -i 100us -q
} > "$work/rss-all"

python3 - "$work/instr" "$work/rss-all" "$big" <<'PY'
import sys
instr = {l.split()[0]: (int(l.split()[1]), int(l.split()[2])) for l in open(sys.argv[1])}
rss = {l.split()[0]: int(l.split()[1]) for l in open(sys.argv[2])}
big = sys.argv[3]
print(f"{'':28}{'tickscope':>12}{'cyclictest':>12}{'ratio':>8}")
for period in ("1ms", "100us"):
    t, c = instr[f"tickscope-{period}"], instr[f"cyclictest-{period}"]
    for i, what in enumerate(("measuring thread", "whole process")):
        print(f"instr/wake-up {what:<14} {period:>5}{t[i]:>8}{c[i]:>12}{t[i] / c[i]:>8.2f}")
for n, key in (("10^4", "1e4"), (big, "big")):
    t, c = rss[f"tickscope-{key}"], rss[f"cyclictest-{key}"]
    print(f"peak RSS [KiB] {n:>12} wake-ups{t:>5}{c:>12}{t / c:>8.2f}")
PY
