#!/usr/bin/env bash
# The executive's cost per activation over a bare clock_nanosleep loop (goal ≤ 200 ns), two
# ways, each over ROUNDS (at least 5) interleaved rounds with min/median/max and the load
# average (see bench/executive_overhead.rs). Release build; every run bounded by timeout.
#
#  1. CPU time: the thread's CPU time (CLOCK_THREAD_CPUTIME_ID) per activation of ACTIVATIONS
#     wake-ups at PERIOD_US, each loop and the difference executive − bare, paired by round.
#  2. Instructions (when valgrind is installed): each loop under callgrind at 1 ms for
#     N1 = 100 and N2 = 600 activations; (Ir(N2) − Ir(N1)) / (N2 − N1) is the user-space
#     instructions per activation, start-up cancelled. Independent of the load: the figure a
#     noisy machine cannot blur.
#
# bench/executive-overhead.sh [ROUNDS] [ACTIVATIONS] [PERIOD_US]   (defaults: 7, 2000, 200)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-7}
activations=${2:-2000}
period_us=${3:-200}
((rounds < 5)) && rounds=5
cargo build --release --manifest-path "$here/Cargo.toml" -q -p tickscope --example bench-executive-overhead
bin="$here/target/release/examples/bench-executive-overhead"

echo "== CPU time per activation (CLOCK_THREAD_CPUTIME_ID)"
timeout 300 "$bin" "$rounds" "$activations" "$period_us"

echo
echo "== user-space instructions per activation (callgrind)"
if ! command -v valgrind >/dev/null; then
    echo "skipping: valgrind is not installed (apt-get install -y valgrind)"
    exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n1=100
n2=600
# Total instructions of one run: callgrind's summary line.
ir() {
    timeout 120 valgrind --tool=callgrind --callgrind-out-file="$tmp/out" -q \
        "$bin" count "$1" "$2" 1000 >/dev/null 2>&1
    awk '/^(summary|totals):/ { print $2; exit }' "$tmp/out"
}
per() { echo $((($(ir "$1" $n2) - $(ir "$1" $n1)) / (n2 - n1))); }
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "$rounds rounds, $n1 and $n2 activations at 1 ms, instructions per activation"
echo "round      bare  executive  difference"
bare=()
exec_=()
diff=()
for ((r = 1; r <= rounds; r++)); do
    if ((r % 2)); then
        b=$(per bare)
        e=$(per executive)
    else
        e=$(per executive)
        b=$(per bare)
    fi
    printf '%5d %9d %10d %11d\n' "$r" "$b" "$e" $((e - b))
    bare+=("$b")
    exec_+=("$e")
    diff+=($((e - b)))
done
spread() {
    printf '%s\n' "${@:2}" | sort -n | awk -v name="$1" '
        { v[NR] = $1 }
        END { printf "%-12s min %7d  median %7d  max %7d instructions\n", name, v[1], v[int((NR + 1) / 2)], v[NR] }'
}
spread bare "${bare[@]}"
spread executive "${exec_[@]}"
spread difference "${diff[@]}"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
