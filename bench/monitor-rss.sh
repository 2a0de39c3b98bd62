#!/usr/bin/env bash
# Memory of `tickscope monitor` over time: RSS (VmRSS from /proc/PID/status) at two points.
# Usage: bench/monitor-rss.sh [FIRST_SECONDS=60] [SECOND_SECONDS=600] [BINARY=target/release/tickscope]
# Runs the monitor (1 ms, one pinned thread, hlog off, HTTP on a free loopback port), scrapes
# /metrics once a second (so the exporter works the whole time), prints VmRSS at both points,
# and stops it with SIGTERM. Nothing is left running.
set -euo pipefail
first=${1:-60}
second=${2:-600}
bin=${3:-target/release/tickscope}
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$bin" monitor -q -i 1ms -a 0 --listen "127.0.0.1:$port" >/dev/null 2>&1 &
pid=$!
trap 'kill -TERM $pid 2>/dev/null || true; wait $pid 2>/dev/null || true' EXIT
rss() { awk '/^VmRSS/ {print $2" "$3}' "/proc/$pid/status"; }
start=$(date +%s)
while :; do
  now=$(( $(date +%s) - start ))
  curl -s -o /dev/null "http://127.0.0.1:$port/metrics" || true
  if [ "$now" -ge "$first" ] && [ -z "${at_first:-}" ]; then at_first=$(rss); echo "RSS after ${first}s: $at_first"; fi
  if [ "$now" -ge "$second" ]; then echo "RSS after ${second}s: $(rss)"; break; fi
  sleep 1
done
