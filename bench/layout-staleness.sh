#!/usr/bin/env bash
# How stale the start-up layout (crates/cli/link/startup-text.ld) is for a program: the
# script's function patterns that match no function of the program any more (renamed or
# removed since bench/startup-text.sh wrote it), tickscope's hot functions the script does
# not name, and how many bytes of code the hot section holds now against when it was written.
# Called by bench/lightness.sh and bench/cyclictest.sh for the program they measure.
#
# Usage: bench/layout-staleness.sh [PROGRAM=target/dist/tickscope]      Needs: nm, python3.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
program=${1:-$here/target/dist/tickscope}
for tool in nm python3; do
  command -v "$tool" >/dev/null || { echo "missing $tool: apt-get install binutils python3" >&2; exit 2; }
done
[ -f "$program" ] || { echo "no $program: build it with scripts/dist.sh" >&2; exit 2; }
symbols=$(mktemp)
trap 'rm -f "$symbols"' EXIT
nm -S --defined-only "$program" > "$symbols"
python3 - "$here/crates/cli/link/startup-text.ld" "$program" "$symbols" <<'PY'
import fnmatch, re, sys
script = open(sys.argv[1]).read()
functions = {}
for line in open(sys.argv[3]):
    f = line.split()
    if len(f) == 4 and f[2] in "tTwWi":
        functions[f[3]] = int(f[1], 16)
patterns = re.findall(r"^\s*\*\(\.text\.(\S+?)\* ", script, re.M)
rust = [n for n in functions if n.startswith("_R")]
if not rust:
    sys.exit(f"{sys.argv[2]} has no v0 symbol names: build it with scripts/dist.sh")
# A pattern matches a function's section `.text.<symbol>` as the linker's glob does.
matched, stale = set(), []
for p in patterns:
    hits = fnmatch.filter(rust, p + "*")
    if hits:
        matched.update(hits)
    else:
        stale.append(p)
# The default run's measuring loop (measure<NanosleepAbs>) and the collector's drain, by parts
# of their v0 names (crates/cli/tests/cli/layout.rs checks the same).
hot = [("6worker7measure", "12NanosleepAbs"), ("9Collector5drain",)]
absent = [" ".join(h) for h in hot if not any(all(p in n for p in h) for n in rust)]
unnamed = [n for n in rust if any(all(p in n for p in h) for h in hot) and n not in matched]
m = re.search(r"\((\d+) symbols, (\d+) KiB", script)
print(f"layout script: {len(patterns)} patterns, {len(stale)} match no function of the program "
      f"({100 * len(stale) / max(len(patterns), 1):.1f} % stale)")
print(f"Rust code the script places: {sum(functions[n] for n in matched) // 1024} KiB now"
      + (f", {m.group(2)} KiB when written ({m.group(1)} symbols)" if m else ""))
print(f"hot functions the script does not name: {len(unnamed)}"
      + (f"; not in the program at all (inlined or renamed): {', '.join(absent)}" if absent else ""))
for n in unnamed[:10]:
    print(f"  {n}")
if stale or unnamed or absent:
    print("rerun bench/startup-text.sh to rewrite the layout")
PY
