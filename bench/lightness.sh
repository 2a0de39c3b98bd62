#!/usr/bin/env bash
# How much tickscope disturbs what it measures, side by side with cyclictest in one run:
# user-space instructions per wake-up (measuring thread and whole process, callgrind) at 1 ms
# and 100 µs, and peak RSS for 10^4 and BIG wake-ups at 100 µs — for cyclictest, a plain
# tickscope run, the same run with --hlog and `tickscope monitor` (both fed from the window
# histograms) — over ROUNDS interleaved rounds, printed as min/median/max with the ratios of
# the medians and the load. Instruction counts do not depend on the load; wall time and so
# the collector's per-second work per wake-up under valgrind do a little, hence the rounds.
#
# Usage: [SHORT=1000 LONG=6000 ROUNDS=5] bench/lightness.sh [BIG]
#        BIG: wake-ups of the long RSS run (default 100000, at 100 µs 10 s per run)
# Needs: root (SCHED_FIFO 90), valgrind, cyclictest (apt-get install valgrind rt-tests).
set -euo pipefail
big=${1:-100000}
rounds=${ROUNDS:-5}
here=$(cd "$(dirname "$0")/.." && pwd)
for tool in valgrind cyclictest /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "missing $tool: apt-get install valgrind rt-tests time" >&2; exit 2; }
done
# The program as it is shipped (docs/dist.md), and how stale its start-up layout is.
"$here/scripts/dist.sh"
ts="$here/target/dist/tickscope"
"$here/bench/layout-staleness.sh" "$ts"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# callgrind counts instructions, not time; under valgrind the vDSO is not used, so clock
# reads are system calls and not counted. Each tool runs SHORT and LONG wake-ups (default
# 1000 and 6000); the difference over LONG - SHORT wake-ups cancels start-up and exit. What
# start-up reads varies from run to run (tickscope scans /proc: ±0.1–0.3 M instructions with
# the number of processes on a busy machine) and the collector's work is per second, not per
# wake-up (valgrind stretches a run's wall time under load), so the whole-process figure
# moves by tens of instructions between rounds: hence rounds and min/median/max. Thread 1 is
# the main thread (tickscope's collector); the measuring thread is the other one that grows
# most with the run.
short=${SHORT:-1000}
long=${LONG:-6000}
span=$((long - short))
count() { awk '/^(summary|totals):/ {print $2; exit}' "$1"; }
per_wakeup() { # round label command... (the loop count is appended)
  local round=$1 label=$2; shift 2
  rm -f "$work/$label"-*.cg*
  for n in "$short" "$long"; do
    timeout 600 valgrind --tool=callgrind --separate-threads=yes \
      --callgrind-out-file="$work/$label-$n.cg" "$@" -l "$n" >/dev/null 2>&1
  done
  local total=0 t a b d thread=0
  for f in "$work/$label-$long.cg"-*; do
    t=${f##*-}
    a=$(count "$work/$label-$short.cg-$t" 2>/dev/null || echo 0); b=$(count "$f")
    d=$((b - ${a:-0})); total=$((total + d))
    if [ "$t" != 01 ] && [ $((d / span)) -gt "$thread" ]; then thread=$((d / span)); fi
  done
  echo "instr $round $label $thread $(( total / span ))"
}
rss() { # round label wake-ups command... : peak RSS in KiB
  local round=$1 label=$2 n=$3; shift 3
  /usr/bin/time -f "%M" -o "$work/rss" "$@" -l "$n" >/dev/null 2>&1
  echo "rss $round $label $(cat "$work/rss")"
}

# `monitor` serves /metrics on a loopback port nobody scrapes here: the exposition is built
# from the windows all the same (a scrape only encodes it).
monitor_http="--listen 127.0.0.1:0"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq 1 "$rounds"); do
  echo "round $r of $rounds: callgrind (slow), then peak RSS ..." >&2
  for p in 1ms 100us; do
    us=${p%us}; [ "$p" = 1ms ] && us=1000
    per_wakeup "$r" "cyclictest-$p" cyclictest -m -p 90 -i "$us" -q -h 400
    per_wakeup "$r" "tickscope-$p" "$ts" run -p 90 -i "$p" -q
    per_wakeup "$r" "hlog-$p" "$ts" run -p 90 -i "$p" -q --hlog "$work/x.hlog"
    per_wakeup "$r" "monitor-$p" "$ts" monitor -p 90 -i "$p" -q $monitor_http
  done
  for n in 10000 "$big"; do
    rss "$r" "cyclictest-$n" "$n" cyclictest -m -p 90 -i 100 -q -h 400
    rss "$r" "tickscope-$n" "$n" "$ts" run -p 90 -i 100us -q
    rss "$r" "hlog-$n" "$n" "$ts" run -p 90 -i 100us -q --hlog "$work/x.hlog"
    rss "$r" "monitor-$n" "$n" "$ts" monitor -p 90 -i 100us -q $monitor_http
  done
  echo "load $r $(cut -d' ' -f1 /proc/loadavg)"
done > "$work/rows"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$work/rows" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
instr, rss = {}, {}
for r in rows:
    if r[0] == "instr":
        instr.setdefault(r[2], []).append((int(r[3]), int(r[4])))
    elif r[0] == "rss":
        rss.setdefault(r[2], []).append(int(r[3]))
loads = [r[2] for r in rows if r[0] == "load"]
def mmm(v):
    return f"{min(v)}/{statistics.median(v):g}/{max(v)}"
print(f"rounds: {len(loads)}; 1-min load average after each round: {' '.join(loads)}")
kinds = ("cyclictest", "tickscope", "hlog", "monitor")
print(f"{'min/median/max':34}{'cyclictest':>16}{'tickscope':>16}{'--hlog':>16}{'monitor':>16}"
      "  ratios of medians (t/c, hlog/t, monitor/t)")
for p in ("1ms", "100us"):
    for i, what in enumerate(("measuring thread", "whole process")):
        c, t, h, m = ([x[i] for x in instr[f"{k}-{p}"]] for k in kinds)
        mc, mt, mh, mm = map(statistics.median, (c, t, h, m))
        print(f"instr/wake-up {what:<14} {p:>5} {mmm(c):>16}{mmm(t):>16}{mmm(h):>16}{mmm(m):>16}"
              f"  {mt/mc:.2f}, {mh/mt:.2f}, {mm/mt:.2f}")
for n in sorted({k.split('-')[1] for k in rss}, key=int):
    c, t, h, m = (rss[f"{k}-{n}"] for k in kinds)
    mc, mt, mh, mm = map(statistics.median, (c, t, h, m))
    print(f"peak RSS [KiB] {n:>8} wake-ups   {mmm(c):>16}{mmm(t):>16}{mmm(h):>16}{mmm(m):>16}"
          f"  {mt/mc:.2f}, {mh/mt:.2f}, {mm/mt:.2f}")
PY
