#!/usr/bin/env bash
# Day-long runs stay small: the outputs and the peak RSS of `tickscope run --json --hlog` on
# virtual time (the hidden --debug-mock backend) with many threads, at several run lengths.
#
# Usage: bench/dayrun.sh [THREADS=64] [HOURS="1 6 24"] [INTERVAL=1ms] [BINARY=target/release/tickscope]
#
# For each length H (hours of virtual time) one run of THREADS mock threads at INTERVAL writes
# the result (--json) and the interval log (--hlog) into a temporary directory; printed per
# run: the wall time it took and the CPU time it used (user + system, GNU time's %U + %S: on
# a loaded machine the wall time is mostly waiting for a CPU), the wake-ups, the bytes of JSON,
# of the log and of both, the windows in the JSON, the log's intervals, and the process's peak
# RSS (VmHWM, from GNU time's %M). A run that did not reach its length (stopped by a signal)
# is marked "interrupted" in the last column. The latency script has 45 values (15-45 us in 1 us steps, 50-150 us in 10 us steps,
# 400 us and 900 us), so a 1-second window of 1000 wake-ups holds about as many histogram
# buckets as a real one. Virtual time changes nothing on the system; the runs are
# deterministic, so one run per length suffices for sizes; RSS and wall time depend on the
# machine's load, printed with them. Nothing is left running; the directory is removed.
set -euo pipefail
threads=${1:-64}
hours=${2:-"1 6 24"}
interval=${3:-1ms}
bin=${4:-target/release/tickscope}
[ -x "$bin" ] || { echo "dayrun.sh: $bin not found (cargo build --release)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "dayrun.sh: needs GNU time (apt-get install time)" >&2; exit 2; }
script=$( (seq -f '%gus' 15 45; seq -f '%gus' 50 10 150; echo 400us; echo 900us) | paste -sd, -)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
echo "# bench/dayrun.sh $threads \"$hours\" $interval $bin; $(nproc) CPUs; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-6s %8s %7s %14s %12s %12s %12s %9s %10s %9s %s\n' hours wall_s cpu_s wake_ups json_B hlog_B all_B windows intervals rss_MB load
for h in $hours; do
  rm -f "$dir"/r.json "$dir"/r.hlog
  start=$(date +%s.%N)
  /usr/bin/time -o "$dir/time" -f '%M %U %S' "$bin" run --debug-mock "$script" -i "$interval" \
    -t "$threads" -D "${h}h" -q --json "$dir/r.json" --hlog "$dir/r.hlog" >/dev/null 2>"$dir/err" ||
    { cat "$dir/err" >&2; exit 1; }
  wall=$(echo "$(date +%s.%N) - $start" | bc)
  json=$(stat -c %s "$dir/r.json")
  hlog=$(stat -c %s "$dir/r.hlog")
  wakeups=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["summary"]["samples"])' "$dir/r.json")
  windows=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["windows"]))' "$dir/r.json")
  intervals=$(grep -c '^Tag=' "$dir/r.hlog" || true)
  rss=$(awk '{printf "%.1f", $1/1024}' "$dir/time")
  cpu=$(awk '{printf "%.1f", $2 + $3}' "$dir/time")
  cut=$(python3 -c 'import json,sys; print("interrupted" if json.load(open(sys.argv[1])).get("interrupted") else "")' "$dir/r.json")
  printf '%-6s %8.1f %7s %14s %12s %12s %12s %9s %10s %9s %s %s\n' "$h" "$wall" "$cpu" "$wakeups" "$json" "$hlog" \
    $((json + hlog)) "$windows" "$intervals" "$rss" "$(cut -d' ' -f1 /proc/loadavg)" "$cut"
done
