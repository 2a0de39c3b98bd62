#!/usr/bin/env bash
# The regression gate's false-failure rate and power, each with its 95 % Clopper–Pearson
# interval (docs/gate.md, "How trustworthy").
#
#   bench/gate.sh [A/A PAIRS] [PLANTED PAIRS] [STALL SCALE]     (defaults: 200, 100, 1.22)
#
# Pairs come from the synthetic model crates/gate/src/synthetic.rs at the default run length
# (1200 one-second windows of 1000 wake-ups): an A/A pair is two runs of the model with
# different seeds; a planted pair makes every interference stall of the candidate STALL SCALE
# times longer (1.22 raises p99.99 by about 20 %; the calibration line says by how much). Each
# pair is judged with the default rules, as `tickscope gate` judges two interval logs.
# Why not live or mock runs: the mock backend replays one latency script (two mock runs are
# identical, an A/A pair would be trivial), and live runs on a shared VM cannot be planted
# with a calibrated interference. About 1 s of CPU a pair (debug build with the gate crate
# optimised, as the tests build it); the load average is printed before and after.
set -euo pipefail
aa=${1:-200}
planted=${2:-100}
scale=${3:-1.22}
here=$(cd "$(dirname "$0")/.." && pwd)
cargo build --manifest-path "$here/Cargo.toml" -q -p tickscope-gate --example gate_bench
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
start=$(date +%s)
"$here/target/debug/examples/gate_bench" --aa "$aa" --planted "$planted" --scale "$scale" \
  | grep -v '^  planted pair [0-9]*:'
echo "wall time: $(( $(date +%s) - start )) s; load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
