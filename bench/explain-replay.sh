#!/usr/bin/env bash
# `monitor --explain` memory over a day at a 64-CPU host's volume, without waiting a day: the
# oracle's recorded late wake-ups (crates/explain/tests/fixtures/oracle/) replayed on virtual
# time through the BPF backend's record format and decoder, the controller's event window,
# the attribution, the per-thread cause tables, the published state, the `monitor` cause
# counters and a textfile (crates/report/examples/explain_replay/, its doc says how).
#
# Usage: bench/explain-replay.sh [HOURS=24] [THREADS=64] [LATE_PERMILLE=1] [MAX_WALL_S=1800] [CPU=0] [WINDOW_MS=1000]
#
# THREADS virtual threads at 1 kHz, LATE_PERMILLE per mille of their wake-ups late (1: 64 late
# wake-ups/s host-wide), task names drawn from 100 000 variants, the event window keeping
# WINDOW_MS behind its newest event (1000: the controller's with the BPF backend, backend.rs
# BPF_WINDOW_KEEP_NS). Printed per virtual hour: late wake-ups and records so far, VmRSS, the
# decoder's name tables (task names by pid, interned texts), the most detail names of one cause
# row, the culprit series, the window's events, the textfile's bytes, whether the cause counters
# add up to the late wake-ups; then RSS min/median/max over the hours, first hour against last,
# VmHWM, and the causes. Exit status 1 when RSS grew by more than 1 MiB from the first hour to the
# last or a bounded structure is over its bound. Runs at nice 19 on CPU (the machine may be
# shared), at most MAX_WALL_S seconds (a cut run says at which hour it stopped). No timing is
# judged; nothing is changed on the system; the textfile (in a temporary directory) is removed at
# the end, also when the run is cut.
set -euo pipefail
hours=${1:-24}
threads=${2:-64}
permille=${3:-1}
max_wall=${4:-1800}
cpu=${5:-0}
window_ms=${6:-1000}
cd "$(dirname "$0")/.."
cargo build -q --release -p tickscope-report --example explain_replay
# The textfile goes into a directory of its own, removed however the replay ends.
TMPDIR=$(mktemp -d)
export TMPDIR
trap 'rm -rf "$TMPDIR"' EXIT
echo "# bench/explain-replay.sh $hours $threads $permille $max_wall $cpu $window_ms; $(nproc) CPUs; $(uname -r)"
timeout $((max_wall + 120)) nice -n 19 taskset -c "$cpu" target/release/examples/explain_replay \
  --hours "$hours" --threads "$threads" --rate-hz 1000 --late-permille "$permille" \
  --variants 100000 --publish-s 10 --max-wall-s "$max_wall" --window-keep-ms "$window_ms"
