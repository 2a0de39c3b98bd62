#!/usr/bin/env bash
# How many windows the BPF backend sends, and how many events it loses, per late wake-up, by
# method (and by build: a comparison of two builds side by side).
#
#   [ROUNDS=3] [SECS=3] [PERIOD=1ms] [THRESHOLD=50us] [METHODS=nanosleep-abs,hybrid]
#   [CLOCK=monotonic] [BASELINE=<tickscope binary>] [TICKSCOPE=<tickscope binary>]
#   bench/explain-windows.sh
#
# Runs `tickscope run -q -a 1 -p 90 --clock CLOCK --method M -i PERIOD -D SECS --explain=bpf
# --explain-threshold THRESHOLD --json F` for each method (and each build: BASELINE first
# when given), ROUNDS times, interleaved (each round starts one run further along, so that
# drift of a noisy host favours neither), and prints per method and build the min / median
# / max over rounds of: the wake-ups later than the threshold, the windows the kernel sent
# (explain.cost.windows: late wake-ups' windows and the copies carried for them), windows
# per late wake-up, the events lost (explain.cost.events_lost), and the late wake-ups named
# `unexplained`. A window of a wake-up the run then finds on time costs a copy, never an
# attribution; a lost event can leave a late one unexplained. Needs root and python3.
set -euo pipefail
rounds=${ROUNDS:-3}
secs=${SECS:-3}
period=${PERIOD:-1ms}
threshold=${THRESHOLD:-50us}
methods=${METHODS:-nanosleep-abs,hybrid}
clock=${CLOCK:-monotonic}
here=$(cd "$(dirname "$0")/.." && pwd)
[ "$(id -u)" = 0 ] || { echo "explain-windows.sh: needs root (BPF, SCHED_FIFO)" >&2; exit 2; }
if [ -z "${TICKSCOPE:-}" ]; then
  cargo build --release --manifest-path "$here/Cargo.toml" -q -p tickscope-cli
  TICKSCOPE="$here/target/release/tickscope"
fi
builds=("$TICKSCOPE")
[ -n "${BASELINE:-}" ] && builds=("$BASELINE" "$TICKSCOPE")
work=$(mktemp -d /tmp/tickscope-windows.XXXXXX)
run_pid=
cleanup() {
  [ -n "$run_pid" ] && kill "$run_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
IFS=, read -r -a ms <<< "$methods"
runs=()
for b in "${!builds[@]}"; do
  for m in "${ms[@]}"; do runs+=("$b $m"); done
done
echo "explain-windows: ${#runs[@]} runs × $rounds rounds, ${secs}s at $period, threshold $threshold, clock $clock ($(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg))"
for ((r = 0; r < rounds; r++)); do
  n=${#runs[@]}
  for ((k = 0; k < n; k++)); do
    read -r b m <<< "${runs[$(((k + r) % n))]}"
    out="$work/$b-$m-$r.json"
    timeout $((secs + 60)) "${builds[$b]}" run -q -a 1 -p 90 --clock "$clock" --method "$m" -i "$period" \
      -D "${secs}s" --explain=bpf --explain-threshold "$threshold" --json "$out" > /dev/null 2> "$work/err" &
    run_pid=$!
    wait "$run_pid" || { echo "explain-windows.sh: run failed: $(tail -1 "$work/err")" >&2; exit 1; }
    run_pid=
  done
done
python3 - "$work" "${builds[@]}" <<'EOF'
import glob, json, os, statistics, sys
work, builds = sys.argv[1], sys.argv[2:]
rows = {}
for f in sorted(glob.glob(os.path.join(work, "*.json"))):
    name = os.path.basename(f)[:-5]
    b, rest = name.split("-", 1)
    m, _ = rest.rsplit("-", 1)
    ex = json.load(open(f))["explain"]
    late = sum(t["late"] for t in ex["threads"])
    unexplained = sum(t["causes"].get("unexplained", {}).get("count", 0) for t in ex["threads"])
    w = ex["cost"]["windows"]
    rows.setdefault((int(b), m), []).append((late, w, w / late if late else float("nan"), ex["cost"]["events_lost"], unexplained))
def mmm(v):
    v = sorted(v)
    f = lambda x: f"{x:.1f}" if isinstance(x, float) else str(x)
    return f"{f(v[0])} / {f(statistics.median(v))} / {f(v[-1])}"
print("build | method | late (min / median / max) | windows | windows per late | events lost | unexplained")
for (b, m), v in sorted(rows.items()):
    cols = [mmm([x[i] for x in v]) for i in range(5)]
    print(f"{builds[b]} | {m} | " + " | ".join(cols))
EOF
