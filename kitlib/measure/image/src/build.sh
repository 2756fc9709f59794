#!/bin/sh
# Build the kit's measuring programs (kit-stream, kit-gups, kit-linpack, kit-pingpong) into OUTDIR with
# the C compiler and OpenBLAS of the system it runs on: the benchmark image builds them with this script,
# and `native` builds them on the host the same way. Each binary carries its source's digest.
set -eu
src=$(cd "$(dirname "$0")" && pwd)
out=$1
mkdir -p "$out"
flags="-O3 -fopenmp -Wall"
build() {
  name=$1; file=$2; shift 2
  digest=$(sha256sum "$src/$file" | cut -c1-16)
  cc $flags -DKIT_SOURCE_DIGEST="\"$digest\"" -o "$out/$name.tmp" "$src/$file" "$@"
  mv "$out/$name.tmp" "$out/$name"
}
build kit-stream kit_stream.c -lm
build kit-gups kit_gups.c
build kit-linpack kit_linpack.c -lopenblas -lm
build kit-pingpong kit_pingpong.c
