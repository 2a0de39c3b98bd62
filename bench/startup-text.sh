#!/usr/bin/env bash
# Regenerates crates/cli/link/startup-text.ld: the linker script that places the functions a
# `tickscope run` executes next to each other at the start of the program's code.
#
# Why: Linux maps file pages around every page fault, up to 64 KiB of neighbours already in
# the page cache ("fault-around", mm/memory.c do_fault_around(),
# /sys/kernel/debug/fault_around_bytes). Scattered over 5 MB of code, the ~1 MB a run executes
# made 2.6 MB of the program resident; laid out together it makes about 1.1 MB resident
# (bench/README.md, "Lighter than cyclictest?").
#
# How: callgrind lists every function the shipped build (scripts/dist.sh) executes in a few typical runs; the
# script turns each into section patterns (Rust puts every function in its own section,
# `.text.<symbol>`). Symbols are in the v0 scheme (.cargo/config.toml), which spells out
# generic arguments, so a pattern names one instantiation. The parts that change from build
# to build or between profiles — crate disambiguators `Cs…_`, back-references `B…_`, LLVM's
# `.llvm.<n>` suffix — become `*`, so the script stays valid after unrelated changes. A function renamed or added later just lands in the ordinary `.text`:
# the layout degrades, nothing breaks. glibc's functions, linked into the program, are named
# by archive member (`*libc.a:malloc.o(...)`), from the linker's map. Rerun after large changes
# to start-up or the run path.
#
# Usage: bench/startup-text.sh        Needs: root (SCHED_FIFO 90), valgrind, nm, python3, and
#                                    glibc linked statically with lld (Rust's default linker).
# It ends by linking target/dist/tickscope with the new script and printing its staleness
# (bench/layout-staleness.sh), which should then be nil.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
for tool in valgrind nm python3; do
  command -v "$tool" >/dev/null || { echo "missing $tool: apt-get install valgrind binutils python3" >&2; exit 2; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The shipped program (scripts/dist.sh), built without the layout: it is what is being
# written (symbol names do not depend on it). The linker's map says which archive member holds
# each of glibc's functions (below).
"$here/scripts/dist.sh" --no-layout --map "$work/map"
ts="$here/target/dist/tickscope"

# The runs whose code is laid out: quiet, with the terminal summary, with result files, and
# two threads; each longer than a statistics window (1 s), so that the per-second paths run.
# --demangle=no keeps the symbols as the linker sees them.
n=0
for args in "run -p 90 -i 100us -q -l 25000" \
  "run -p 90 -i 1ms -q -l 3000" \
  "run -p 90 -i 1ms -l 2500 --json $work/r.json --csv $work/r.csv" \
  "run -p 90 -i 1ms -t 2 -l 2500"; do
  n=$((n + 1))
  # shellcheck disable=SC2086 # the arguments are split on purpose
  timeout 600 valgrind --tool=callgrind --demangle=no --callgrind-out-file="$work/$n.cg" \
    "$ts" $args >/dev/null 2>&1
done
nm -S --defined-only "$ts" > "$work/nm"

python3 - "$work/nm" "$work/map" "$work"/*.cg > "$work/startup-text.ld" <<'PY'
import bisect, collections, re, sys

# Every function of the program, and the aliases LLVM gave merged functions (several
# symbols, one address): the section is named after one of them, callgrind after another.
size, at = {}, collections.defaultdict(list)
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) == 4 and f[2] in "tTwWi":  # i: a function chosen at load time (IFUNC)
        size[f[3]] = int(f[1], 16)
        at[f[0]].append(f[3])
address = {name: a for a, names in at.items() for name in names}

ran = set()
for path in sys.argv[3:]:
    for line in open(path):
        m = re.match(r"c?fn=\(\d+\)\s+(\S+)", line)
        if m and m.group(1) in size:
            ran.update(at[address[m.group(1)]])

# Variants a library picks by the CPU's features at run time; valgrind's virtual CPU has
# fewer features than the machine, so callgrind sees another variant than the real run.
ran.update(n for n in size if "9crc32fast11specialized" in n)

# glibc, libm and GCC's unwinder, linked statically (crates/cli/build.rs), keep their code in
# one `.text` per archive member (`.text.avx`, `.text.evex`, … for the variants chosen by CPU
# features), so they are named by member: `*libc.a:malloc.o(.text .text.*)`; so are the C
# start files (`rcrt1.o`). The map the linker wrote (lld's format: address, load address,
# size, alignment, then the input section) says which file's section holds each function
# that ran. A function with variants chosen by CPU features (memmove.o chooses among
# memmove-avx-unaligned-erms.o, memmove-evex-unaligned-erms.o, …) has all of them named:
# valgrind's CPU lacks AVX-512, so callgrind saw another variant than the machine runs.
VARIANT = r"-(sse|ssse|avx|evex|erms|fma)"
inputs = []
for line in open(sys.argv[2]):
    m = re.match(r"\s*([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)\s+\d+\s+(\S+?)(?:\(([^)]+\.o)\))?:\((\.text[^)]*)\)\s*$", line)
    if m and m.group(3).endswith((".a", ".o")) and not m.group(3).endswith(".rcgu.o"):
        inputs.append((int(m.group(1), 16), int(m.group(2), 16), m.group(3), m.group(4)))
if not any(member for *_, member in inputs):
    sys.exit("the linker's map names no archive member's code: is glibc linked statically, and is the linker lld?")
inputs.sort()
starts = [i[0] for i in inputs]
stems_with_variants = {re.split(VARIANT, member)[0] for *_, member in inputs if member and re.search(VARIANT, member)}
# The program's entry point, `_start` in the C start file (rcrt1.o for a static PIE, Scrt1.o
# otherwise), runs in every run; callgrind does not name it.
by_file, c_bytes = {"*crt1.o"}, collections.Counter()
for name in list(ran):
    i = bisect.bisect_right(starts, int(address[name], 16)) - 1
    if i < 0 or not inputs[i][0] <= int(address[name], 16) < inputs[i][0] + inputs[i][1]:
        continue
    start, length, path, member = inputs[i]
    c_bytes[(path, member, start)] = length
    ran.discard(name)
    if member is None:
        by_file.add(f"*/{path.rsplit('/', 1)[-1]}")
        continue
    # libm-2.36.a: any version.
    archive = re.sub(r"-[0-9.]+\.a$", "*.a", path.rsplit("/", 1)[-1])
    stem = re.split(VARIANT, member)[0].removesuffix(".o")
    by_file.add(f"*{archive}:{member}")
    if stem in stems_with_variants:
        by_file.add(f"*{archive}:{stem}-*.o")

patterns = set()
for name in ran:
    name = re.sub(r"\.llvm\.\d+$", "", name)
    if name.startswith("_R"):
        # A generic function's instance ends with the crate that instantiated it; the
        # program may use another crate's identical instance: any of them.
        name = re.sub(r"ECs[0-9A-Za-z]*_\d+[0-9A-Za-z_]+$", "E", name)
        name = re.sub(r"Cs[0-9A-Za-z]*_", "Cs*_", name)
        name = re.sub(r"B[0-9A-Za-z]*_", "B*_", name)
    patterns.add(name)

total = sum(size[n] for n in ran)
print("/* Generated by bench/startup-text.sh: do not edit by hand. The functions a")
print(f"   `tickscope run` executes ({len(ran)} symbols, {total // 1024} KiB, and")
print(f"   {len(c_bytes)} sections of glibc and the C start files, {sum(c_bytes.values()) // 1024} KiB), placed together")
print("   before the rest of the code. See bench/README.md, \"Lighter than cyclictest?\". */")
print("SECTIONS {")
print("  .text.startup_hot : {")
for p in sorted(patterns):
    print(f"    *(.text.{p}* .text.unlikely.{p}*)")
for p in sorted(by_file):
    print(f"    {p}(.text .text.*)")
print("  }")
print("} INSERT BEFORE .text;")
PY
cp "$work/startup-text.ld" "$here/crates/cli/link/startup-text.ld"
echo "wrote crates/cli/link/startup-text.ld" >&2
"$here/scripts/dist.sh"
"$here/bench/layout-staleness.sh" "$ts"
