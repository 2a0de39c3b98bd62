#!/usr/bin/env bash
# The floor under --explain's observer effect (issue #28): how much of it the BPF programs'
# work is, and how much the attachment alone. Builds a variant of tickscope from this
# checkout (its tracked files as they are now, copied to a temporary directory) whose BPF
# programs (crates/explain/bpf/capture.bpf.c) all return at their first statement, then runs
# bench/observer-rounds.sh with that variant as TICKSCOPE and the shipped build as BASELINE,
# alternating run by run on the same host.
#
# The variant attaches the same tracepoints and records nothing: its traced rounds pay for
# each tracepoint being enabled and for the kernel's dispatch to a BPF program
# (`__bpf_trace_run`, kernel/trace/bpf_trace.c: the program's recursion counter,
# migrate_disable, RCU, the call into the JIT image) with cold caches on a CPU back from
# idle, and nothing else. So its observer effect is the least any backend hooking these
# tracepoints can have on this machine, and the baseline's minus it is the most that leaner
# program bodies could remove. (Its events/s column reads 0: nothing is recorded.)
#
# ONLY=tracepoint[,tracepoint…] attaches only those (still empty) in the variant's traced
# rounds: the floor of a smaller set, e.g. ONLY=sched_switch, the one tracepoint no
# explanation of threads can do without. ONLY=none attaches nothing, so that both rounds of
# a pair are alike: the A/A check of the pairing on this host (what the script reports for a
# change that does nothing). The variant reads the list when it runs (environment variable
# TICKSCOPE_FLOOR_ONLY; the shipped build ignores it).
#
# BODIES=keep leaves the programs as shipped (with ONLY: what that subset costs doing its
# work, e.g. whether a capture with only the switch on the path could meet the target).
#
# VARIANT=/path keeps the variant there (built when the file does not exist, used as it is
# when it does): one build for several ONLY sets, or for running bench/observer-rounds.sh
# with it directly (TICKSCOPE=$VARIANT TICKSCOPE_FLOOR_ONLY=… , no baseline). An empty
# TICKSCOPE_FLOOR_ONLY attaches nothing, like none; unset, everything.
#
# Usage: [RUNS=4] [ROUNDS=120] [SECS=1] [PERIODS=1ms] [ONLY=…] [BODIES=empty|keep] [VARIANT=/path]
#        [TICKSCOPE=/path/to/tickscope] bench/observer-floor.sh
# TICKSCOPE: the shipped build to compare with (default: scripts/dist.sh builds it here).
# Needs: root, clang with the BPF target and llvm-strip (apt-get install clang llvm), cargo,
# python3. The variant's build is a full `dist` build in the temporary directory (minutes on
# two CPUs), removed with it on every exit.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
[ "$(id -u)" = 0 ] || { echo "observer-floor.sh: needs root (SCHED_FIFO, BPF)" >&2; exit 2; }
for tool in clang llvm-strip cargo python3 git; do
  command -v "$tool" >/dev/null || { echo "observer-floor.sh: missing $tool (apt-get install clang llvm python3 git; cargo: rustup.rs)" >&2; exit 2; }
done
export RUNS=${RUNS:-4} ROUNDS=${ROUNDS:-120} SECS=${SECS:-1} PERIODS=${PERIODS:-1ms}
bodies=${BODIES:-empty}
case $bodies in
  empty) what="the variant whose BPF programs all return at once (the attachment alone)" ;;
  keep) what="the variant with the shipped BPF programs (ONLY's attached, or all)" ;;
  *) echo "observer-floor.sh: BODIES must be empty or keep, not '$bodies'" >&2; exit 2 ;;
esac
work=$(mktemp -d /tmp/tickscope-observer-floor.XXXXXX)
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM

if [ -z "${TICKSCOPE:-}" ]; then
  bash "$here/scripts/dist.sh"
  TICKSCOPE="${CARGO_TARGET_DIR:-$here/target}/dist/tickscope"
fi

if [ -n "${VARIANT:-}" ] && [ -x "$VARIANT" ]; then
  echo "the variant: $VARIANT, as built before (delete it to build it again)" >&2
  variant=$VARIANT
else
# (The build below is not indented: its Python here-documents end at column 0.)
# The checkout's tracked files as they are in the working tree (uncommitted changes too, so
# that the variant differs from TICKSCOPE built here in its programs only).
mkdir "$work/src"
(cd "$here" && git ls-files -z | while IFS= read -r -d '' f; do
  if [ -e "$f" ] || [ -L "$f" ]; then cp --parents -P "$f" "$work/src/"; fi
done)

# Every program returns at its first statement: each `int on_…(__u64 *ctx)` definition, and
# the vector programs of the VECTOR macro (their one statement, a record, removed).
if [ "$bodies" = empty ]; then
python3 - "$work/src/crates/explain/bpf/capture.bpf.c" <<'PY'
import re, sys
path = sys.argv[1]
src = open(path).read()
src, plain = re.subn(r'(SEC\("tp_btf/[^"]+"\)\nint on_\w+\(__u64 \*ctx\)\n\{\n)', r'\1\treturn 0;\n', src)
macro = 0
for rec in ("put2(K_VECTOR_ENTRY, idx, 0);", "put2(K_VECTOR_EXIT, idx, 0);"):
    macro += src.count(rec)
    src = src.replace(rec, "(void)0;" + " " * (len(rec) - len("(void)0;")))
declared = src.count('SEC("tp_btf/')
if plain + macro != declared or macro != 2:
    sys.exit(f"observer-floor.sh: emptied {plain} programs and {macro} macro bodies of "
             f"{declared} SEC(\"tp_btf/…\") in capture.bpf.c: the source changed shape")
open(path, "w").write(src)
print(f"variant: all {declared} program definitions return at once "
      f"({plain} functions, the VECTOR macro's entry and exit)", file=sys.stderr)
PY
fi
# With TICKSCOPE_FLOOR_ONLY set, the variant attaches only the tracepoints it lists: none
# of the others at load, and only those when a traced round attaches them again.
python3 - "$work/src/crates/explain/src/bpf.rs" <<'PY'
import sys
path = sys.argv[1]
src = open(path).read()
only = ('fn floor_only(t: &str) -> bool {\n'
        '    std::env::var("TICKSCOPE_FLOOR_ONLY")\n'
        '        .map_or(true, |v| v.split(\',\').any(|o| o == t))\n'
        '}\n')
edits = [
    (".map(|((t, p), l)| (t, p, Some(l)))",
     ".map(|((t, p), l)| (t, p, if floor_only(t) { Some(l) } else { None }))"),
    ("if link.is_none() && !(returns_off && *tracepoint == RETURN_TRACEPOINT) {",
     "if link.is_none() && floor_only(tracepoint) && !(returns_off && *tracepoint == RETURN_TRACEPOINT) {"),
]
for old, new in edits:
    if src.count(old) != 1:
        sys.exit(f"observer-floor.sh: `{old}` is not once in bpf.rs: the source changed shape")
    src = src.replace(old, new)
open(path, "w").write(src + "\n" + only)
PY
bash "$work/src/crates/explain/bpf/build.sh"
echo "building the variant (a full dist build in $work) ..." >&2
(cd "$work/src" && CARGO_TARGET_DIR="$work/target" bash scripts/dist.sh)
variant="$work/target/dist/tickscope"
if [ -n "${VARIANT:-}" ]; then
  cp "$variant" "$VARIANT"
  variant=$VARIANT
fi
fi

shipped=$TICKSCOPE
echo "observer floor: tickscope = $what,"
if [ -n "${ONLY:-}" ]; then
  echo "                attaching only: $ONLY"
  export TICKSCOPE_FLOOR_ONLY=$ONLY
fi
echo "                baseline = the shipped build ($shipped)"
TICKSCOPE=$variant BASELINE=$shipped bash "$here/bench/observer-rounds.sh"
