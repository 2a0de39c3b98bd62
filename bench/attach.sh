#!/usr/bin/env bash
# tickscope attach against the target's own measurement of the same wake-ups.
#
#   bench/attach.sh [SECONDS]        (default 10)
#
# 1. cyclictest -m -p 90 -i 1000 -a 1 -t 1 -v -q (pinned to CPU 1, every cycle's latency
#    printed), attached by `tickscope attach --tid <its measuring thread>` from CPU 0 until it
#    exits. cyclictest prints no timestamps, so its cycles are aligned with attach's wake-ups
#    by the latency pattern (the offset with the least mean absolute difference), then
#    compared cycle by cycle.
# 2. `tickscope run -p 90 -a 1 -i 1ms --samples` (the loop the periodic library runs,
#    `wake_step`), attached the same way; wake-ups are joined exactly on their expiry.
# For each: wake-ups compared, p50/p99 of both over the same wake-ups, and the offset of the
# "woke" point (target's own latency − attach's, µs): the return to user space plus the
# target's clock read, minus the trace's µs truncation. The load average is printed: figures
# taken under load are noisy. Needs root, rt-tests (cyclictest), python3. TICKSCOPE=path uses
# that binary instead of building the release one.
set -euo pipefail
secs=${1:-10}
here=$(cd "$(dirname "$0")/.." && pwd)
if [ -n "${TICKSCOPE:-}" ]; then ts=$TICKSCOPE; else
  cargo build --release --manifest-path "$here/Cargo.toml" -q -p tickscope-cli
  ts="$here/target/release/tickscope"
fi
command -v cyclictest >/dev/null || { echo "cyclictest missing: apt-get install rt-tests" >&2; exit 2; }
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT

# The measuring thread of process $1: the thread whose comm is $2, or any thread but the main one.
measuring_tid() {
  for _ in $(seq 100); do
    for t in /proc/"$1"/task/*; do
      t=${t##*/}
      if [ -n "$2" ]; then
        [ "$(cat /proc/"$1"/task/"$t"/comm 2>/dev/null)" = "$2" ] && { echo "$t"; return; }
      elif [ "$t" != "$1" ]; then echo "$t"; return; fi
    done
    sleep 0.05
  done
  echo "no measuring thread in $1" >&2; exit 1
}

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== cyclictest, ${secs}s attached" >&2
cyclictest -m -p 90 -i 1000 -a 1 -t 1 -D $((secs + 3)) -v -q >"$work/ct.txt" 2>&1 &
ct=$!; pids+=("$ct")
sleep 0.3
tid=$(measuring_tid "$ct" "")
taskset -c 0 "$ts" attach --pid "$ct" --tid "$tid" -q --samples "$work/att-ct.csv" \
  --json "$work/att-ct.json" >/dev/null
wait "$ct" || true

echo "== tickscope run, ${secs}s attached" >&2
"$ts" run -p 90 -a 1 -i 1ms -D "$((secs + 3))s" -q --samples "$work/run.csv" >/dev/null &
tr=$!; pids+=("$tr")
tid=$(measuring_tid "$tr" tickscope-0)
taskset -c 0 "$ts" attach --pid "$tr" --tid "$tid" -q --samples "$work/att-run.csv" \
  --json "$work/att-run.json" >/dev/null
wait "$tr" || true
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$work" <<'PY'
import csv, sys
work = sys.argv[1]

def pct(v, q):
    s = sorted(v)
    return s[min(len(s) - 1, max(0, -(-int(q * len(s) * 1000) // 1000) - 1))]

def line(name, own, att, off):
    print(f"{name}: {len(att)} wake-ups compared | p50 own {pct(own,.5):.1f} attach {pct(att,.5):.1f} µs"
          f" | p99 own {pct(own,.99):.1f} attach {pct(att,.99):.1f} µs"
          f" | woke offset (own − attach) p50 {pct(off,.5):.2f} p99 {pct(off,.99):.2f}"
          f" min {min(off):.2f} max {max(off):.2f} µs")

def samples(path):
    with open(path) as f:
        return [(int(r["expiry_ns"]), int(r["latency_ns"])) for r in csv.DictReader(f)]

# cyclictest: "       0:    1979:      24" = thread: cycle: latency µs
ct = {}
for l in open(f"{work}/ct.txt"):
    p = [x.strip() for x in l.split(":")]
    if len(p) == 3 and all(x.isdigit() for x in p):
        ct[int(p[1])] = int(p[2])
att = [lat / 1000 for _, lat in samples(f"{work}/att-ct.csv")]
cycles = sorted(ct)
best = None
probe = att[:2000]
for c0 in range(cycles[0], cycles[-1] - len(probe) + 2):
    d = [abs(ct[c0 + i] - a) for i, a in enumerate(probe) if c0 + i in ct]
    if len(d) > len(probe) // 2:
        m = sum(d) / len(d)
        if best is None or m < best[0]:
            best = (m, c0)
c0 = best[1]
pairs = [(ct[c0 + i], a) for i, a in enumerate(att) if c0 + i in ct]
line("cyclictest", [p[0] for p in pairs], [p[1] for p in pairs], [p[0] - p[1] for p in pairs])
print(f"  (cyclictest printed {len(ct)} cycles, attach saw {len(att)}; aligned at cycle {c0},"
      f" mean |difference| {best[0]:.2f} µs; cyclictest's latencies are whole µs)")

own = dict(samples(f"{work}/run.csv"))
att = dict(samples(f"{work}/att-run.csv"))
common = sorted(set(own) & set(att))
line("tickscope run", [own[e] / 1000 for e in common], [att[e] / 1000 for e in common],
     [(own[e] - att[e]) / 1000 for e in common])
print(f"  (run measured {len(own)} wake-ups, attach {len(att)}, same expiry in both: {len(common)})")
PY
