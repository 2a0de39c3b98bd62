#!/usr/bin/env bash
# The observer effect of --explain measured inside one tickscope process: `tickscope run
# --rounds N --explain=BACKEND` traces every second round and leaves the others with nothing
# of its own attached in the kernel (BPF programs detached, tracefs events off), and the
# result pairs each traced round with the untraced round right after it (explain.observer.
# paired: the median difference of p50, p99 and max, with the sign test's distribution-free
# 95 % interval). The rounds of a pair are a second apart, where bench/observer-cost.sh's
# runs are separate processes tens of seconds apart: the host's drift, which on this
# project's VM moves a run's p50 by several µs within minutes, cancels far better.
# SCHED_FIFO 90, pinned to CPU 1. Each of RUNS runs (the periods interleaved) prints its
# pairs' medians and intervals; then the min / median / max of the medians over the runs.
#
# BASELINE=/path/to/another/tickscope (e.g. the build before a change) runs that build too,
# alternating with TICKSCOPE run by run (the first of each run rotating), and prints its
# table after TICKSCOPE's: the two builds' observer effects measured minutes apart on the
# same host, rather than across sessions.
#
# Usage: [RUNS=3] [ROUNDS=120] [SECS=1] [PERIODS="1ms 100us"] [BACKEND=bpf]
#        [TICKSCOPE=/path/to/tickscope] [BASELINE=/path/to/tickscope] bench/observer-rounds.sh
# Needs: root (SCHED_FIFO, BPF or tracefs), python3.
# Targets (issue #28): p50 ≤ +0.5 µs, p99 ≤ +1 µs.
set -euo pipefail
runs=${RUNS:-3}
rounds=${ROUNDS:-120}
secs=${SECS:-1}
periods=${PERIODS:-1ms 100us}
backend=${BACKEND:-bpf}
here=$(cd "$(dirname "$0")/.." && pwd)
[ "$(id -u)" = 0 ] || { echo "observer-rounds.sh: needs root (SCHED_FIFO, BPF, tracefs)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "observer-rounds.sh: missing python3" >&2; exit 2; }
[ $((rounds % 2)) = 0 ] && [ "$rounds" -ge 12 ] || { echo "observer-rounds.sh: ROUNDS must be even and 12 or more (6 pairs give an interval)" >&2; exit 2; }
if [ -z "${TICKSCOPE:-}" ]; then
  cargo build --release --manifest-path "$here/Cargo.toml" -q -p tickscope-cli
  TICKSCOPE="$here/target/release/tickscope"
fi
work=$(mktemp -d /tmp/tickscope-observer-rounds.XXXXXX)
run_pid=
cleanup() {
  [ -n "$run_pid" ] && kill "$run_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

builds="tickscope"
[ -n "${BASELINE:-}" ] && builds="tickscope baseline"
echo "observer effect of --explain=$backend, paired rounds in one process: $runs runs of $rounds rounds of ${secs} s, FIFO 90, CPU 1"
[ -n "${BASELINE:-}" ] && echo "builds: tickscope = $TICKSCOPE, baseline = $BASELINE, alternating"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq 1 "$runs"); do
  order=$builds
  [ -n "${BASELINE:-}" ] && [ $((r % 2)) = 0 ] && order="baseline tickscope"
  for b in $order; do
    bin=$TICKSCOPE
    [ "$b" = baseline ] && bin=$BASELINE
    for p in $periods; do
      "$bin" run -a 1 --policy fifo -p 90 -i "$p" -D "${secs}s" --rounds "$rounds" \
        --explain="$backend" -q --json "$work/$b-$p-$r.json" >/dev/null 2>"$work/$b-$p-$r.err" &
      run_pid=$!
      wait "$run_pid" || { echo "$b run $r at $p failed:" >&2; cat "$work/$b-$p-$r.err" >&2; exit 1; }
      run_pid=
    done
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$work" "$runs" "$periods" "$builds" <<'PY'
import json, statistics, sys
work, runs, periods, builds = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), sys.argv[4].split()
us = lambda v: f"{v / 1e3:+.2f}"
for b, p in [(b, p) for b in builds for p in periods]:
    who = "" if len(builds) == 1 else f"{b}, "
    print(f"\n{who}{p}: traced round − the untraced round after it, µs (median and 95 % interval of the pairs)")
    print(f"{'run':>4} {'pairs':>6}  {'p50':<26} {'p99':<28} {'max':<30} {'backend':<8} {'events/s':>9} {'lost':>5}")
    med = {"p50": [], "p99": [], "max": []}
    for r in range(1, runs + 1):
        doc = json.load(open(f"{work}/{b}-{p}-{r}.json"))
        ex = doc.get("explain") or {}
        o = (ex.get("observer") or {}).get("paired")
        cost = ex.get("cost") or {}
        if not o:
            print(f"{r:>4}  no pairs (backend: {cost.get('backend', 'none')}; {ex.get('note', '')})")
            continue
        cells = []
        for k in ("p50", "p99", "max"):
            m = o[k]
            med[k].append(m["median_ns"])
            iv = f" ({us(m['low_ns'])} … {us(m['high_ns'])})" if "low_ns" in m else ""
            cells.append(us(m["median_ns"]) + iv)
        print(f"{r:>4} {o['pairs']:>6}  {cells[0]:<26} {cells[1]:<28} {cells[2]:<30} "
              f"{cost.get('backend', '?'):<8} {cost.get('events_per_s', 0):>9.0f} {cost.get('events_lost', 0):>5}")
    for k, v in med.items():
        if v:
            print(f"  {k} median over runs: min {us(min(v))} / median {us(statistics.median(v))} / max {us(max(v))} µs")
PY
