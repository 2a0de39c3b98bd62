#!/usr/bin/env bash
# The executive's queue of next expiries: binary heaps vs a linear scan at 2, 10 and 100
# tasks, ns per dispatch on virtual time (see bench/executive.rs). Bounded by timeout.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cargo build --release --manifest-path "$here/Cargo.toml" -q -p tickscope --example bench-executive
timeout 120 "$here/target/release/examples/bench-executive"
