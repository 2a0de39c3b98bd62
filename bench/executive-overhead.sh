#!/usr/bin/env bash
# The executive's CPU cost per activation over a bare clock_nanosleep loop (goal ≤ 200 ns):
# ROUNDS interleaved rounds of ACTIVATIONS wake-ups at PERIOD_US, min/median/max, the load
# average before and after (see bench/executive_overhead.rs). Release build; bounded by timeout.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-7}
activations=${2:-2000}
period_us=${3:-200}
cargo build --release --manifest-path "$here/Cargo.toml" -q -p tickscope --example bench-executive-overhead
timeout 300 "$here/target/release/examples/bench-executive-overhead" "$rounds" "$activations" "$period_us"
