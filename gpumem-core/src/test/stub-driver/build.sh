#!/usr/bin/env bash
# Builds the stub driver (cuda-stub.c) against the CUDA toolkit's cuda.h, for the tests that run JCuda's natives
# and JNA against it: OUT/libcuda.so.1, and OUT/no-virtual-memory/libcuda.so.1 without the entry points of physical
# memory. Where this machine cannot build it (not Linux, no C compiler, no cuda.h), it writes why into
# OUT/unavailable.txt and exits 0: the tests then skip with that reason, or fail where GPUMEM_STUB_DRIVER=required.
# Usage: build.sh OUT      (CC picks the compiler, CUDA_HOME the toolkit)
set -euo pipefail
source_dir=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: build.sh OUT}
rm -rf "$out"
mkdir -p "$out/no-virtual-memory"
unavailable() {
  echo "$1" > "$out/unavailable.txt"
  echo "stub driver not built: $1"
  exit 0
}
[ "$(uname -s)" = Linux ] || unavailable "the stub driver is a Linux shared library, and this is $(uname -s)"
cc=${CC:-cc}
command -v "$cc" > /dev/null || unavailable "no C compiler: '$cc' is not on the PATH (set CC)"
# the toolkit of the nvcc on the PATH, as nvcc itself reports it (its TOP), whatever wrapper or link leads to it
nvcc_toolkit=$(nvcc --dryrun -x cu -c /dev/null -o /dev/null 2>&1 | sed -n 's/^#\$ TOP=//p' || true)
for toolkit in "${CUDA_HOME:-}" "${CUDA_PATH:-}" "$nvcc_toolkit"; do
  if [ -n "$toolkit" ] && [ -f "$toolkit/include/cuda.h" ]; then
    include="$toolkit/include"
    break
  fi
done
[ -n "${include:-}" ] || unavailable "no cuda.h: looked in CUDA_HOME, CUDA_PATH and the toolkit of the nvcc on the PATH; set CUDA_HOME to a CUDA toolkit"
version=$(sed -n 's/^#define CUDA_VERSION \([0-9]*\).*/\1/p' "$include/cuda.h")
[ "${version:-0}" -ge 13000 ] || unavailable "$include/cuda.h is of CUDA ${version:-unknown}: the stub follows CUDA 13's; set CUDA_HOME to a CUDA 13 toolkit"
flags=(-std=gnu11 -Wall -Wextra -Werror -Wno-unused-parameter -O1 -g -shared -fPIC -fvisibility=hidden
  "-I$include" -Wl,-soname,libcuda.so.1)
for variant in "" no-virtual-memory; do
  define=${variant:+-DGPUMEM_STUB_NO_VIRTUAL_MEMORY}
  if ! errors=$("$cc" "${flags[@]}" $define "$source_dir/cuda-stub.c" -o "$out/$variant/libcuda.so.1" -lpthread 2>&1); then
    echo "$errors" >&2
    unavailable "the stub did not compile with $cc against $include/cuda.h: $(grep -m1 'error' <<< "$errors")"
  fi
done
echo "stub driver built against $include/cuda.h of CUDA $version"
