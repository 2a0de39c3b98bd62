#!/usr/bin/env bash
# The periodic library's strategies (sleep, busy, hybrid) vs a loop that sleeps for the period
# after each wake-up, as the Cpp-Periodic-Task README does; 1 ms, interleaved.
#
#   bench/periodic.sh [SECONDS_EACH] [ROUNDS] [FIFO_PRIORITY]   (defaults: 10 s, 5 rounds, OTHER)
#
# Five loops (sleep, busy, hybrid auto, hybrid 100 µs, relative sleep) x SECONDS_EACH, plus rests.
# Prints per loop: mean period and its error (drift), p99 and max |dt - period|, p99 latency
# against the grid, overruns, CPU % of one core. See bench/periodic.rs for the method.
# FIFO_PRIORITY > 0 runs every loop under SCHED_FIFO (root); the busy loop then meets RT
# throttling. The whole run is bounded by timeout.
set -euo pipefail
secs=${1:-10}
rounds=${2:-5}
fifo=${3:-0}
here=$(cd "$(dirname "$0")/.." && pwd)
cargo build --release --manifest-path "$here/Cargo.toml" -q -p tickscope --example bench-periodic
timeout $((5 * secs + 10 * rounds + 60)) "$here/target/release/examples/bench-periodic" "$secs" "$rounds" "$fifo"
