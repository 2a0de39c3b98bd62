#!/usr/bin/env bash
# `tickscope run --method itimer` against a single-threaded C itimer program (bench/ref/itimer.c:
# setitimer(ITIMER_REAL), SIGALRM handler reads the clock, sigsuspend), same settings: SCHED_FIFO
# 90, 1 ms, memory locked, /dev/cpu_dma_latency 0. Interleaved A B A B for ROUNDS rounds.
#
#   bench/itimer.sh [WAKEUPS_PER_RUN] [ROUNDS]        (defaults: 5000, 5)
#
# Prints each round's p50/p99/max of both, then min/median/max over the rounds, the ratio of the
# medians (goal: p50 and p99 within ±25 %) and the load average before and after.
# Needs root (FIFO 90), a C compiler, python3.
set -euo pipefail
n=${1:-5000}
rounds=${2:-5}
here=$(cd "$(dirname "$0")/.." && pwd)
cargo build --profile profiling --manifest-path "$here/Cargo.toml" -q -p tickscope-cli
ts="$here/target/profiling/tickscope"  # release code with debug info, as lightness.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -O2 -o "$work/itimer-ref" "$here/bench/ref/itimer.c"
limit=$(( n / 1000 + 60 ))
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq 1 "$rounds"); do
  echo "reference $r $(timeout "$limit" "$work/itimer-ref" 1000 "$n" 90)" >> "$work/rows"
  timeout "$limit" "$ts" run --method itimer -p 90 -i 1ms -l "$n" -q --json "$work/ts.json" >/dev/null
  python3 - "$work/ts.json" "$r" >> "$work/rows" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
s = d["summary"] if "summary" in d else d["runs"][0]["summary"]
l, rep = s["latency_ns"], s.get("method_report") or {}
print("tickscope", sys.argv[2], l["p50"], l["p99"], l["max"], s["samples"], rep.get("signals_forwarded", "?"))
PY
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$work/rows" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
print(f"{'program':<10} {'round':>5} {'p50 µs':>8} {'p99 µs':>8} {'max µs':>9}  forwarded")
for r in rows:
    fwd = r[6] if len(r) > 6 else "-"
    print(f"{r[0]:<10} {r[1]:>5} {int(r[2])/1e3:>8.1f} {int(r[3])/1e3:>8.1f} {int(r[4])/1e3:>9.1f}  {fwd}")
for i, name in ((2, "p50"), (3, "p99"), (4, "max")):
    col = {p: [int(r[i]) / 1e3 for r in rows if r[0] == p] for p in ("reference", "tickscope")}
    spread = lambda v: f"{min(v):.1f} / {statistics.median(v):.1f} / {max(v):.1f}"
    ratio = statistics.median(col["tickscope"]) / statistics.median(col["reference"])
    verdict = "" if name == "max" else ("  within ±25 %" if 0.75 <= ratio <= 1.25 else "  OUTSIDE ±25 %")
    print(f"{name} µs min/median/max: reference {spread(col['reference'])}, tickscope {spread(col['tickscope'])}; "
          f"ratio of medians {ratio:.2f}{verdict}")
PY
