#!/usr/bin/env bash
# busy vs hybrid vs nanosleep-abs at 1 ms, interleaved and repeated: what the hybrid's
# precision costs next to a busy-wait's.
#
# Usage: bench/methods.sh [ROUNDS]        (default 3 rounds of 10 s per method)
# Environment: POLICY (default fifo), DURATION (default 10s), INTERVAL (default 1ms),
#              EXTRA (more tickscope flags, e.g. "-a 1" to pin, or "--margin 100us"),
#              OUT (result file, default ${TMPDIR:-/tmp}/tickscope-methods-<date>.json).
#
# Prints, per round and as the median over rounds:
#   p99 ratio  = hybrid's p99 |dt − period| / busy's      (goal: ≤ 2)
#   CPU ratio  = hybrid's CPU / busy's CPU                 (goal: ≤ 0.15)
# and the same two numbers for nanosleep-abs, for scale.
#
# Every run is bounded: the whole benchmark is killed after rounds × 3 × duration + 60 s.
# Busy-waiting under fifo holds one CPU at a real-time priority for DURATION at a time;
# the kernel's RT throttling still gives other tasks ~50 ms per second.
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${1:-3}
POLICY=${POLICY:-fifo}
DURATION=${DURATION:-10s}
INTERVAL=${INTERVAL:-1ms}
EXTRA=${EXTRA:-}
OUT=${OUT:-${TMPDIR:-/tmp}/tickscope-methods-$(date +%Y%m%d-%H%M%S).json}
command -v python3 >/dev/null || { echo "bench/methods.sh needs python3" >&2; exit 2; }

cargo build --release --quiet
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
secs=${DURATION%s}
limit=$(( ROUNDS * 3 * ${secs%%[!0-9]*} + 60 ))

# shellcheck disable=SC2086 # EXTRA is a list of flags
timeout --signal=INT --kill-after=10 "$limit" \
  target/release/tickscope run --method busy,hybrid,nanosleep-abs --rounds "$ROUNDS" \
  -i "$INTERVAL" -D "$DURATION" --policy "$POLICY" --json "$OUT" $EXTRA

echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$OUT" <<'PY'
import json, statistics, sys

doc = json.load(open(sys.argv[1]))
rounds = {}
for r in doc["runs"]:
    s = r["summary"]
    dev = (s.get("period_ns") or {}).get("abs_deviation_p99")
    rounds.setdefault(r["round"], {})[r["method"]] = (dev, s["cpu_percent"], s)

def ratio(a, b):
    return a / b if a is not None and b else float("nan")

print()
print(f"{'round':>5} {'method':>14} {'p99 |dt-T|':>12} {'CPU %':>7} {'p99 ratio':>10} {'CPU ratio':>10}  margin")
p99r, cpur, sleep_p99r, sleep_cpur = [], [], [], []
for n in sorted(rounds):
    rd = rounds[n]
    if "busy" not in rd:
        continue
    bdev, bcpu, _ = rd["busy"]
    for m in ("busy", "hybrid", "nanosleep-abs"):
        if m not in rd:
            continue
        dev, cpu, s = rd[m]
        pr, cr = ratio(dev, bdev), ratio(cpu, bcpu)
        margin = ""
        rep = (s.get("method_report") or {}).get("margin")
        if rep:
            margin = f"final {rep['final_ns']/1e3:.1f} us, mean {rep['mean_ns']/1e3:.1f} us, {rep['overshot']}/{rep['sleeps']} late"
        print(f"{n:>5} {m:>14} {dev/1e3 if dev is not None else float('nan'):>10.2f}us {cpu:>7.2f} {pr:>10.2f} {cr:>10.3f}  {margin}")
        if m == "hybrid":
            p99r.append(pr); cpur.append(cr)
        if m == "nanosleep-abs":
            sleep_p99r.append(pr); sleep_cpur.append(cr)

def med(v):
    v = [x for x in v if x == x]
    return statistics.median(v) if v else float("nan")

print()
print(f"hybrid / busy, median of {len(p99r)} rounds: p99 |dt-T| ratio {med(p99r):.2f} (goal <= 2), "
      f"CPU ratio {med(cpur):.3f} (goal <= 0.15)")
print(f"nanosleep-abs / busy, median: p99 |dt-T| ratio {med(sleep_p99r):.1f}, CPU ratio {med(sleep_cpur):.3f}")
print(f"result file: {sys.argv[1]}")
PY
