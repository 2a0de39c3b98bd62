#!/usr/bin/env bash
# What the BPF backend's collector costs, per build: interleaved runs at 1 ms (SCHED_FIFO 90,
# pinned to CPU 1) of each binary given with --explain=bpf, and of the first one without
# --explain (the plain run's collector: the engine's own draining, which every run pays).
# The collector is the main thread (it drains the samples, polls the BPF ring buffer, decodes
# the windows sent for late wake-ups and attributes them). Per run: the main thread's CPU
# time (/proc/PID/task/PID/schedstat, first field, ns, proc(5)) from 2 s after the start to
# 1 s before the end, as ms per second; the result's explain.cost.read_cpu_ns (CPU time of
# polling and decoding, CLOCK_THREAD_CPUTIME_ID) per window sent (explain.cost.windows), µs;
# and windows per second. Printed: min/median/max over the rounds, with the load average
# before and after. The order of the binaries alternates from round to round.
#
# Usage: [ROUNDS=5] [SECS=10] [FLAGS=...] bench/collector-cost.sh [BINARY...]
#   BINARY  tickscope programs to compare (default: target/dist/tickscope, built with
#           scripts/dist.sh when missing)
#   FLAGS   more options for the --explain=bpf runs, e.g. FLAGS="--explain-threshold 1s":
#           no window is sent, what is left is polling an empty ring buffer and the rest of
#           --explain (the per-second /proc context)
# Needs root (SCHED_FIFO, BPF). Each run is bounded by its -D; nothing on the system is
# changed; the results go to a temporary directory, removed on exit.
set -euo pipefail
rounds=${ROUNDS:-5}
secs=${SECS:-10}
here=$(cd "$(dirname "$0")/.." && pwd)
[ "$(id -u)" = 0 ] || { echo "collector-cost.sh: needs root (SCHED_FIFO, BPF)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "collector-cost.sh: missing python3" >&2; exit 2; }
[ "$secs" -ge 5 ] 2>/dev/null || { echo "collector-cost.sh: SECS must be an integer >= 5" >&2; exit 2; }
if [ $# = 0 ]; then
  [ -x "$here/target/dist/tickscope" ] || "$here/scripts/dist.sh"
  set -- "$here/target/dist/tickscope"
fi
for b in "$@"; do
  [ -x "$b" ] || { echo "collector-cost.sh: $b is not an executable" >&2; exit 2; }
done
work=$(mktemp -d /tmp/tickscope-collector.XXXXXX)
run_pid=
cleanup() {
  [ -n "$run_pid" ] && kill "$run_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

one() { # label binary round [flags...]
  local label=$1 bin=$2 r=$3 a c ta tc
  shift 3
  "$bin" run -q -a 1 --policy fifo -p 90 -i 1ms -D "${secs}s" "$@" \
    --json "$work/$label-$r.json" >/dev/null 2>"$work/$label-$r.err" &
  run_pid=$!
  sleep 2
  a=$(cut -d' ' -f1 "/proc/$run_pid/task/$run_pid/schedstat"); ta=$EPOCHREALTIME
  sleep $((secs - 3))
  c=$(cut -d' ' -f1 "/proc/$run_pid/task/$run_pid/schedstat"); tc=$EPOCHREALTIME
  wait "$run_pid" || { echo "run failed: $label: $(tail -1 "$work/$label-$r.err")" >&2; exit 1; }
  run_pid=
  echo "$label $r $a $c $ta $tc" >> "$work/rows"
}

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for r in $(seq 1 "$rounds"); do
  bins=("$@")
  if [ $((r % 2)) = 0 ]; then
    bins=()
    for ((i = $#; i >= 1; i--)); do bins+=("${!i}"); done
  fi
  [ $((r % 2)) = 1 ] && one plain "$1" "$r"
  for i in "${!bins[@]}"; do
    # The label: the binary's position in the arguments (1, 2, …), whatever the order.
    for ((k = 1; k <= $#; k++)); do [ "${!k}" = "${bins[$i]}" ] && label="bpf-$k"; done
    echo "round $r/$rounds ${bins[$i]}" >&2
    # shellcheck disable=SC2086 # FLAGS is a list of options
    one "$label" "${bins[$i]}" "$r" --explain=bpf ${FLAGS:-}
  done
  [ $((r % 2)) = 0 ] && one plain "$1" "$r"
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

python3 - "$work" "$rounds" "$secs" "$load_before" "$load_after" "${FLAGS:-}" "$@" <<'PY'
import json, statistics, sys
work, rounds, secs, lb, la, flags, *bins = sys.argv[1:]
rows = {}
for line in open(f"{work}/rows"):
    label, r, a, c, ta, tc = line.split()
    doc = json.load(open(f"{work}/{label}-{r}.json"))
    cost = (doc.get("explain") or {}).get("cost") or {}
    ms_s = (int(c) - int(a)) / (float(tc) - float(ta)) / 1e6
    windows = cost.get("windows", 0)
    per_window = cost["read_cpu_ns"] / windows / 1e3 if windows else None
    rows.setdefault(label, []).append((ms_s, per_window, windows / float(secs)))

def mmm(v):
    v = [x for x in v if x is not None]
    if not v:
        return "-"
    return f"{min(v):.2f}/{statistics.median(v):.2f}/{max(v):.2f}"

print(f"collector cost: {rounds} interleaved rounds of {secs} s, 1 ms, FIFO 90, CPU 1")
print(f"load average before {lb}, after {la}")
for k, b in enumerate(bins, 1):
    print(f"bpf-{k}: {b} --explain=bpf {flags}".rstrip())
print(f"plain: {bins[0]} without --explain")
print(f"{'':8}{'collector ms/s':>24}{'read µs/window':>24}{'windows/s':>24}")
for label in ["plain"] + [f"bpf-{k}" for k in range(1, len(bins) + 1)]:
    v = rows.get(label, [])
    cols = [mmm([x[i] for x in v]) for i in range(3)]
    if label == "plain":
        cols[1:] = ["-", "-"]
    print(f"{label:8}" + "".join(f"{c:>24}" for c in cols))
print("(min/median/max over the rounds; collector ms/s from 2 s after the start to 1 s before the end)")
PY
