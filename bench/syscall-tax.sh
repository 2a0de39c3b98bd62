#!/usr/bin/env bash
# What `--explain=bpf` costs the rest of the machine's system calls: `perf bench syscall
# basic` (getppid in a loop, ns per call) pinned to the housekeeping CPU 0 while nothing
# runs, and while `tickscope run -a 1 --policy fifo -p 90 -i 1ms --explain=bpf` measures CPU
# 1 — for each build given, interleaved, ROUNDS rounds in a rotating order. A `sys_exit`
# tracepoint with a program attached sends every task's system calls through the kernel's
# slow exit path (syscall_regfunc, kernel/tracepoint.c) and runs the program on each exit,
# whatever CPU the task is on; the pinned capture's programs return there after one lookup.
# Prints per setting the ns per call, min / median / max over the rounds.
#
# Usage: [ROUNDS=5] bench/syscall-tax.sh BINARY [BINARY…]
# Needs: root (SCHED_FIFO, BPF), perf (linux-perf), 2+ CPUs.
set -euo pipefail
rounds=${ROUNDS:-5}
[ "$(id -u)" = 0 ] || { echo "syscall-tax.sh: needs root (SCHED_FIFO, BPF)" >&2; exit 2; }
command -v perf >/dev/null || { echo "syscall-tax.sh: missing perf (apt-get install linux-perf)" >&2; exit 2; }
[ $# -ge 1 ] || { echo "usage: syscall-tax.sh BINARY [BINARY…]" >&2; exit 2; }
work=$(mktemp -d /tmp/tickscope-syscall-tax.XXXXXX)
run_pid=
cleanup() {
  [ -n "$run_pid" ] && kill "$run_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
calls() { taskset -c 0 perf bench syscall basic 2>&1 | awk '/usecs\/op/ {printf "%.1f\n", $1 * 1000}'; }
settings=(none "$@")
echo "system call cost on CPU 0 (perf bench syscall basic, ns per call), $rounds rounds"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq 1 "$rounds"); do
  n=${#settings[@]}
  for k in $(seq 0 $((n - 1))); do
    i=$(( (k + r) % n ))
    s=${settings[$i]}
    if [ "$s" = none ]; then
      calls >> "$work/$i"
      continue
    fi
    "$s" run -a 1 --policy fifo -p 90 -i 1ms -D 60s --explain=bpf -q >/dev/null 2>"$work/err" &
    run_pid=$!
    sleep 2 # loaded and attached
    calls >> "$work/$i"
    kill -INT "$run_pid" 2>/dev/null || true
    wait "$run_pid" 2>/dev/null || true
    run_pid=
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
for i in "${!settings[@]}"; do
  sort -n "$work/$i" | awk -v name="${settings[$i]}" '{v[NR] = $1} END {
    m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    printf "%-48s %6.1f / %6.1f / %6.1f ns per call\n", name, v[1], m, v[NR] }'
done
