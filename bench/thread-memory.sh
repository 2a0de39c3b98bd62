#!/usr/bin/env bash
# Memory per measuring thread, tickscope beside cyclictest: peak RSS (GNU time's %M) of a
# run with 1 thread and with N threads (SCHED_FIFO 90, 1 ms, mlockall, 3 s), interleaved over
# ROUNDS rounds; per thread = (peak at N − peak at 1) / (N − 1), so the program's own pages
# (binary, libraries, start-up) cancel. Prints min/median/max over the rounds and the load.
# Peak RSS does not depend on load much; the figures of one round still vary by a few pages.
#
# Usage: [ROUNDS=5 N=8] bench/thread-memory.sh [BINARY=target/dist/tickscope]
# Needs: root (SCHED_FIFO 90, mlockall), cyclictest (apt-get install rt-tests), GNU time.
set -euo pipefail
rounds=${ROUNDS:-5}
n=${N:-8}
bin=${1:-target/dist/tickscope}
for tool in cyclictest /usr/bin/time "$bin"; do
  command -v "$tool" >/dev/null || { echo "missing $tool (apt-get install rt-tests time; scripts/dist.sh)" >&2; exit 2; }
done
[ "$n" -ge 2 ] || { echo "N must be at least 2" >&2; exit 2; }
peak() { /usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -1; }
tick() { peak "$bin" run -q -t "$1" -p 90 -i 1ms -D 3s; }
cyc() { peak cyclictest -q -m -p 90 -i 1000 -D 3 -t "$1"; }
declare -A per
for r in $(seq 1 "$rounds"); do
  t1=$(tick 1); c1=$(cyc 1); tn=$(tick "$n"); cn=$(cyc "$n")
  per[tick]+="$(( (tn - t1) / (n - 1) )) "
  per[cyc]+="$(( (cn - c1) / (n - 1) )) "
  per[tickN]+="$tn "; per[cycN]+="$cn "
  echo "round $r: tickscope 1→$n threads $t1→$tn KiB, cyclictest $c1→$cn KiB"
done
stats() { tr ' ' '\n' | grep . | sort -n | awk '{v[NR]=$1} END {printf "%d/%d/%d", v[1], v[int((NR+1)/2)], v[NR]}'; }
echo "per measuring thread, KiB (min/median/max over $rounds rounds):"
echo "  tickscope  $(echo "${per[tick]}" | stats)   peak at -t $n: $(echo "${per[tickN]}" | stats)"
echo "  cyclictest $(echo "${per[cyc]}" | stats)   peak at -t $n: $(echo "${per[cycN]}" | stats)"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) (binary: $bin)"
