#!/usr/bin/env bash
# Where the BPF backend's CPU goes, per program and per thread (not a comparison).
#
#   [SECS=10] [PERIOD=1ms] [PIN=1] bench/bpf-cost.sh
#
# Runs `tickscope run -a 1 --policy fifo -p 90 -i PERIOD -D SECS --explain=bpf` (PIN=0: without
# `-a 1`, so that every CPU records and each program's ns/run is that of a recording CPU) with the
# kernel's BPF run-time statistics on (sysctl kernel.bpf_stats_enabled=1, restored to its
# previous value on every exit) and, one second before the run ends, reads:
#   - per program (bpftool prog show): run_cnt, run_time_ns, ns per run, runs per wake-up;
#     each program runs on every CPU where its tracepoint fires (on CPUs that are not
#     recorded it returns after one array lookup; that early return is in its average);
#   - per thread of tickscope (/proc/PID/task/TID/stat utime + stime, clock ticks):
#     CPU time and its share of the wall time so far;
#   - tickscope's own peak RSS (VmHWM) and the result's explain.cost (events/s, the
#     collector's read CPU, the CPU loading the programs took once).
# Repeats ROUNDS (3) times and prints min / median / max of each figure with the load
# average. Needs root, bpftool, python3.
set -euo pipefail
secs=${SECS:-10}
period=${PERIOD:-1ms}
rounds=${ROUNDS:-3}
pin=()
[ "${PIN:-1}" = 0 ] || pin=(-a 1)
here=$(cd "$(dirname "$0")/.." && pwd)
[ "$(id -u)" = 0 ] || { echo "bpf-cost.sh: needs root (BPF, SCHED_FIFO, sysctl)" >&2; exit 2; }
command -v bpftool >/dev/null || { echo "bpf-cost.sh: needs bpftool (apt-get install bpftool)" >&2; exit 2; }
[ "$secs" -ge 3 ] || { echo "bpf-cost.sh: SECS must be at least 3" >&2; exit 2; }
if [ -z "${TICKSCOPE:-}" ]; then
  cargo build --release --manifest-path "$here/Cargo.toml" -q -p tickscope-cli
  TICKSCOPE="$here/target/release/tickscope"
fi
stats=/proc/sys/kernel/bpf_stats_enabled
saved=$(cat $stats)
work=$(mktemp -d /tmp/tickscope-bpfcost.XXXXXX)
run_pid=
cleanup() {
  [ -n "$run_pid" ] && kill "$run_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  echo "$saved" > $stats
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
echo 1 > $stats
hz=$(getconf CLK_TCK)
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for r in $(seq 1 "$rounds"); do
  "$TICKSCOPE" run -q "${pin[@]}" --policy fifo -p 90 -i "$period" -D "${secs}s" --explain=bpf \
    --json "$work/r$r.json" > /dev/null 2> "$work/r$r.err" &
  run_pid=$!
  start=$(date +%s.%N)
  sleep $((secs - 1))
  now=$(date +%s.%N)
  {
    echo "wall $(awk -v a="$start" -v b="$now" 'BEGIN { print b - a }')"
    grep VmHWM /proc/$run_pid/status
    for t in /proc/$run_pid/task/*; do
      # comm may hold spaces; utime and stime are fields 14 and 15 counted from the end of ")".
      rest=$(sed 's/.*) //' "$t/stat" 2>/dev/null) || continue
      set -- $rest
      echo "thread $(cat "$t/comm" | tr ' ' '_') $(( ${12} + ${13} ))"
    done
  } > "$work/r$r.proc"
  # Our programs: those the run's link descriptors hold (prog_id in /proc/PID/fdinfo).
  cat /proc/$run_pid/fdinfo/* 2>/dev/null | sed -n 's/^prog_id:[[:space:]]*//p' | sort -u > "$work/r$r.ids"
  bpftool prog show -j > "$work/r$r.progs"
  wait "$run_pid" || { echo "bpf-cost.sh: run $r failed: $(tail -1 "$work/r$r.err")" >&2; exit 1; }
  run_pid=
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
python3 - "$work" "$rounds" "$secs" "$period" "$hz" "$load_before" "$load_after" "${#pin[@]}" <<'PY'
import json, statistics, sys, collections
work, rounds, secs, period, hz, lb, la = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5]), sys.argv[6], sys.argv[7]
pinned = "CPU 1" if sys.argv[8] != "0" else "not pinned"
period_ns = {"ms": 1e6, "us": 1e3}[period[-2:]] * float(period[:-2])
progs = collections.defaultdict(lambda: collections.defaultdict(list))
threads = collections.defaultdict(list)
other = collections.defaultdict(list)
for r in range(1, rounds + 1):
    lines = open(f"{work}/r{r}.proc").read().split("\n")
    wall = float(lines[0].split()[1])
    wakeups = wall * 1e9 / period_ns
    for l in lines[1:]:
        f = l.split()
        if not f:
            continue
        if f[0] == "VmHWM:":
            other["tickscope peak RSS MiB"].append(int(f[1]) / 1024)
        elif f[0] == "thread":
            ms = int(f[2]) * 1000 / hz
            threads[f[1]].append(ms / (wall * 1000) * 100)
    doc = json.load(open(f"{work}/r{r}.json"))
    cost = (doc.get("explain") or {}).get("cost") or {}
    other["records/s (all CPUs)"].append(cost.get("events_per_s", 0))
    other["collector read CPU %"].append(cost.get("read_cpu_percent", 0))
    other["loader CPU ms (once)"].append(cost.get("load_cpu_ns", 0) / 1e6)
    ids = {int(x) for x in open(f"{work}/r{r}.ids").read().split()}
    for p in json.load(open(f"{work}/r{r}.progs")):
        name = p.get("name", "")
        if p.get("id") not in ids or "run_cnt" not in p:
            continue
        cnt, ns = p["run_cnt"], p["run_time_ns"]
        progs[name]["ns/run"].append(ns / cnt if cnt else 0)
        progs[name]["runs/wake-up"].append(cnt / wakeups)
        progs[name]["ns/wake-up"].append(ns / wakeups)
def mmm(v):
    return f"{min(v):.1f}/{statistics.median(v):.1f}/{max(v):.1f}"
print(f"BPF backend cost: {rounds} rounds of {secs} s, FIFO 90, {pinned}, period {period}")
print(f"load average before {lb}, after {la}; min/median/max over rounds")
print(f"\n{'program':34}{'ns/run':>22}{'runs/wake-up':>22}{'ns/wake-up':>22}")
total = [0.0] * rounds
for name in sorted(progs, key=lambda n: -statistics.median(progs[n]["ns/wake-up"])):
    d = progs[name]
    for i, v in enumerate(d["ns/wake-up"]):
        total[i] += v
    print(f"{name:34}{mmm(d['ns/run']):>22}{mmm(d['runs/wake-up']):>22}{mmm(d['ns/wake-up']):>22}")
print(f"{'all programs, all CPUs':34}{'':>22}{'':>22}{mmm(total):>22}")
print(f"\n{'tickscope thread':34}{'CPU % of wall':>22}")
for t, v in sorted(threads.items()):
    print(f"{t:34}{mmm(v):>22}")
for k, v in other.items():
    print(f"{k:34}{mmm(v):>22}")
PY
