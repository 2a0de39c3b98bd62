#!/usr/bin/env bash
# Memory of a real `tickscope run` with every output on does not grow with its length: RSS
# each minute of one run on the real clock and backend.
#
# Usage: bench/realrss.sh [MINUTES=15] [THREADS=2] [INTERVAL=100us] [BINARY=target/release/tickscope]
#
# Runs `tickscope run -t THREADS -i INTERVAL -D MINUTESm -q --json --hlog --csv` (the default
# method and policy; as root the measuring threads run SCHED_FIFO) into a temporary
# directory and reads the process's VmRSS and VmHWM (/proc/PID/status) 10 s after the start
# and then at the end of every minute. Printed: one row per reading (seconds since the start, VmRSS, VmHWM,
# the load average), then min/median/max of VmRSS over the readings from minute 2 on, its
# growth from minute 2 to the last, and the outputs' sizes. The run is ended by its own -D;
# the directory is removed, nothing is left running or changed (the run restores the
# policies and settings it applied as it ends).
set -euo pipefail
minutes=${1:-15}
threads=${2:-2}
interval=${3:-100us}
bin=${4:-target/release/tickscope}
[ -x "$bin" ] || { echo "realrss.sh: $bin not found (cargo build --release)" >&2; exit 2; }
dir=$(mktemp -d)
pid=
cleanup() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill -TERM "$pid"; wait "$pid" || true; fi
  rm -rf "$dir"
}
trap cleanup EXIT
echo "# bench/realrss.sh $minutes $threads $interval $bin; $(nproc) CPUs; $(uname -r); load before: $(cut -d' ' -f1-3 /proc/loadavg)"
"$bin" run -t "$threads" -i "$interval" -D "${minutes}m" -q \
  --json "$dir/r.json" --hlog "$dir/r.hlog" --csv "$dir/r.csv" >"$dir/out" 2>"$dir/err" &
pid=$!
field() { awk -v k="$1:" '$1 == k {print $2}' "/proc/$pid/status" 2>/dev/null || true; }
printf '%-8s %10s %10s %s\n' at_s rss_KiB hwm_KiB load
start=$(date +%s)
readings=()
next=10
while kill -0 "$pid" 2>/dev/null; do
  now=$(( $(date +%s) - start ))
  if [ "$now" -ge "$next" ]; then
    rss=$(field VmRSS); hwm=$(field VmHWM)
    [ -n "$rss" ] || break
    printf '%-8s %10s %10s %s\n' "$next" "$rss" "$hwm" "$(cut -d' ' -f1 /proc/loadavg)"
    [ "$next" -ge 120 ] && readings+=("$rss")
    if [ "$next" -lt 60 ]; then next=60; else next=$(( next + 60 )); fi
  fi
  sleep 1
done
status=0
wait "$pid" || status=$?
pid=
if [ "$status" -ne 0 ]; then
  echo "realrss.sh: the run failed (status $status):" >&2
  cat "$dir/err" >&2
  exit 1
fi
if [ "${#readings[@]}" -gt 0 ]; then
  printf '%s\n' "${readings[@]}" | sort -n | awk '{ v[NR] = $1 } END {
    printf "VmRSS from minute 2 on: min/median/max %d/%d/%d KiB over %d readings\n", v[1], v[int((NR + 1) / 2)], v[NR], NR }'
  echo "VmRSS growth from minute 2 to the last reading: $(( ${readings[-1]} - ${readings[0]} )) KiB"
fi
echo "outputs: json $(stat -c %s "$dir/r.json") B, hlog $(stat -c %s "$dir/r.hlog") B, csv $(stat -c %s "$dir/r.csv") B"
