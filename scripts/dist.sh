#!/usr/bin/env bash
# Builds the `tickscope` program as it is shipped: target/dist/tickscope, the `dist` profile
# (Cargo.toml: release code), which crates/cli/build.rs links the lean way — the start-up code
# layout (crates/cli/link/startup-text.ld), glibc linked statically where its archives are
# installed, packed relocations — with Rust's v0 symbol names, which the layout's patterns are
# written in. Development and test builds do none of this (docs/dist.md).
#
# Usage: scripts/dist.sh [--no-layout] [--map FILE]
#   --no-layout  link without the layout script (bench/startup-text.sh, which writes it)
#   --map FILE   also write the linker's map to FILE
# Any RUSTFLAGS of the caller are kept; v0 symbol names are added to them, never replaced.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
map=
while [ $# -gt 0 ]; do
  case $1 in
    --no-layout) export TICKSCOPE_NO_TEXT_LAYOUT=1 ;;
    --map) [ $# -ge 2 ] || { echo "dist.sh: --map needs a file" >&2; exit 2; }; map=$2; shift ;;
    *) echo "dist.sh: unknown argument '$1' (usage: scripts/dist.sh [--no-layout] [--map FILE])" >&2; exit 2 ;;
  esac
  shift
done
export RUSTFLAGS="${RUSTFLAGS:+$RUSTFLAGS }-C symbol-mangling-version=v0"
if [ -n "$map" ]; then
  cargo rustc --profile dist --locked --manifest-path "$here/Cargo.toml" -q \
    -p tickscope-cli --bin tickscope -- -C link-arg=-Wl,-Map="$map"
else
  cargo build --profile dist --locked --manifest-path "$here/Cargo.toml" -q -p tickscope-cli --bin tickscope
fi
echo "built ${CARGO_TARGET_DIR:-$here/target}/dist/tickscope" >&2
