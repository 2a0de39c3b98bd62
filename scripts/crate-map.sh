#!/usr/bin/env bash
# Prints the workspace's crate map as a Markdown table: each crate, its package, the lines of
# Rust in src/ and in tests/, and the workspace crates it depends on. docs/architecture.md
# shows its output.
#
# Usage: scripts/crate-map.sh
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
lines() { # DIR: lines of every .rs file under it (0 when there is none)
  if [ -d "$1" ]; then find "$1" -name '*.rs' -print0 | xargs -0 cat | wc -l; else echo 0; fi
}
echo "| crate | package | src lines | tests lines | uses |"
echo "|---|---|---:|---:|---|"
total_src=0 total_tests=0
for dir in "$here"/crates/*/; do
  dir=${dir%/}
  crate=$(basename "$dir")
  package=$(sed -n 's/^name = "\(.*\)"$/\1/p' "$dir/Cargo.toml" | head -1)
  src=$(lines "$dir/src")
  tests=$(lines "$dir/tests")
  uses=$(sed -n 's/^\(tickscope[a-z-]*\) = { .*path = "\.\.\/\([a-z]*\)".*/\2/p' "$dir/Cargo.toml" | sort -u | paste -sd, - | sed 's/,/, /g')
  echo "| \`crates/$crate\` | \`$package\` | $src | $tests | ${uses:-—} |"
  total_src=$((total_src + src)) total_tests=$((total_tests + tests))
done
echo "| total | | $total_src | $total_tests | |"
