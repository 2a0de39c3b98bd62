#!/bin/sh
# Rebuilds capture.bpf.o from capture.bpf.c (needs clang with the BPF target and
# llvm-strip). The object is checked in, so that building tickscope needs neither; the test
# `bpf_object_matches_source` (tests/bpf_object.rs) rebuilds it when clang is present and
# compares. Run from anywhere: paths are relative to this directory, so that the object
# does not depend on where the checkout is.
set -eu
cd "$(dirname "$0")"
out=${1:-capture.bpf.o}
clang -O2 -g -target bpf -D__TARGET_ARCH_x86 -fdebug-prefix-map="$PWD"=. -c capture.bpf.c -o "$out"
llvm-strip -g "$out"
