#!/usr/bin/env bash
# `--explain` with exactly the capabilities deploy/systemd/tickscope-monitor.service grants
# (its AmbientCapabilities= line), and with the same set less CAP_SYSLOG, as user nobody:
# which backend ran, whole-process CPU (user + system over wall time, /usr/bin/time,
# children included: the BPF loader helper), the collector's reading CPU and the loader's
# one-time CPU (the result's explain.cost), how many timer callbacks in the recorded events
# were named rather than left as hex addresses (a second, 1 s run that logs every wake-up's
# events: --explain-threshold 1ns --explain-log-events), and in how many runs stderr said
# the wait timers' callbacks were hidden (their expiry filter off).
# Interleaved rounds: each round runs every (build, capability set) in a rotating order.
# Printed per (build, set): min / median / max over the rounds.
#
# Usage: [ROUNDS=5] [SECS=10] [BASELINE=/path/to/another/tickscope] bench/least-privilege.sh
# BASELINE adds the same runs by another build (e.g. the one before a change).
# Needs: root (to switch to nobody with setpriv and grant the set), python3, /usr/bin/time,
# setpriv (util-linux), 2 CPUs (the run is pinned to CPU 1, SCHED_FIFO 90, 1 ms).
set -euo pipefail
rounds=${ROUNDS:-5}
secs=${SECS:-10}
here=$(cd "$(dirname "$0")/.." && pwd)
[ "$(id -u)" = 0 ] || { echo "least-privilege.sh: needs root (setpriv to user nobody with capabilities)" >&2; exit 2; }
for tool in python3 /usr/bin/time setpriv; do
  command -v "$tool" >/dev/null || { echo "least-privilege.sh: missing $tool (apt-get install python3 time util-linux)" >&2; exit 2; }
done
if [ -z "${TICKSCOPE:-}" ]; then
  cargo build --release --manifest-path "$here/Cargo.toml" -q -p tickscope-cli
  TICKSCOPE="$here/target/release/tickscope"
fi
work=$(mktemp -d /tmp/tickscope-privilege.XXXXXX)
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
# Copies user nobody can run, whatever the checkout's directories allow.
install -m 755 "$TICKSCOPE" "$work/tickscope"
builds=(tickscope)
if [ -n "${BASELINE:-}" ]; then
  install -m 755 "$BASELINE" "$work/baseline"
  builds+=(baseline)
fi
unit="$here/deploy/systemd/tickscope-monitor.service"
caps=$(sed -n 's/^AmbientCapabilities=//p' "$unit" | tr ' ' '\n' | sed 's/^CAP_/+/' | tr 'A-Z' 'a-z' | paste -sd, -)
[ -n "$caps" ] || { echo "least-privilege.sh: no AmbientCapabilities= in $unit" >&2; exit 2; }
nosyslog=$(echo "$caps" | tr ',' '\n' | grep -vx '+syslog' | paste -sd, -)

as_nobody() { # caps args...
  local c=$1
  shift
  setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps="$c" --ambient-caps="$c" "$@"
}

one() { # build set round
  local b=$1 s=$2 r=$3 c out="$work/$1-$2-$3"
  c=$caps
  [ "$s" = nosyslog ] && c=$nosyslog
  mkdir -m 777 "$out"
  as_nobody "$c" /usr/bin/time -f "%e %U %S" -o "$out/time" "$work/$b" run -q -a 1 --policy fifo \
    -p 90 -i 1ms -D "${secs}s" --explain --json "$out/r.json" > /dev/null 2> "$out/err" || true
  as_nobody "$c" "$work/$b" run -q -a 1 --policy fifo -p 90 -i 1ms -D 1s --explain \
    --explain-threshold 1ns --explain-log "$out/log.jsonl" --explain-log-events > /dev/null 2>> "$out/err" || true
}

echo "# bench/least-privilege.sh ROUNDS=$rounds SECS=$secs; $(nproc) CPUs; $(uname -r); load $(cut -d' ' -f1 /proc/loadavg)"
echo "# unit: $caps"
combos=()
for b in "${builds[@]}"; do for s in unit nosyslog; do combos+=("$b/$s"); done; done
for r in $(seq 1 "$rounds"); do
  n=${#combos[@]}
  for i in $(seq 0 $((n - 1))); do
    c=${combos[$(((i + r) % n))]}
    one "${c%/*}" "${c#*/}" "$r"
  done
done
echo "# load after $(cut -d' ' -f1 /proc/loadavg)"
python3 -B - "$work" "$rounds" "${combos[@]}" <<'EOF'
import json, os, re, statistics, sys
work, rounds, combos = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
hexname = re.compile(r"^0x[0-9a-f]+$")
def spread(xs):
    xs = [x for x in xs if x is not None]
    if not xs:
        return "-"
    return f"{min(xs):.2f}/{statistics.median(xs):.2f}/{max(xs):.2f}"
print(f"{'build/set':22} {'backend':9} {'CPU %':18} {'reading %':18} {'loader ms':20} {'named':>7} {'hex':>5} {'filter off':>10}")
for c in combos:
    b, s = c.split("/")
    cpu, reading, loader, backends, named, hexes, off = [], [], [], set(), 0, 0, 0
    for r in range(1, rounds + 1):
        d = os.path.join(work, f"{b}-{s}-{r}")
        try:
            wall, user, sys_ = map(float, open(os.path.join(d, "time")).read().split()[-3:])
            cpu.append(100 * (user + sys_) / wall)
        except (OSError, ValueError):
            pass
        try:
            e = json.load(open(os.path.join(d, "r.json"))).get("explain", {})
            backends.add(e.get("backend", "?"))
            cost = e.get("cost") or {}
            reading.append(cost.get("read_cpu_percent"))
            loader.append(cost["load_cpu_ns"] / 1e6 if "load_cpu_ns" in cost else None)
        except (OSError, ValueError):
            backends.add("failed")
        try:
            off += "callbacks are hidden" in open(os.path.join(d, "err")).read()
        except OSError:
            pass
        try:
            for line in open(os.path.join(d, "log.jsonl")):
                for f in re.findall(r'"function":"([^"]*)"', line):
                    if hexname.match(f):
                        hexes += 1
                    else:
                        named += 1
        except OSError:
            pass
    print(f"{c:22} {','.join(sorted(backends)):9} {spread(cpu):18} {spread(reading):18} {spread(loader):20} {named:7} {hexes:5} {off:>10}")
EOF
