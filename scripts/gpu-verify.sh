#!/usr/bin/env bash
# Proves gpumem's CUDA path on this machine from the GPU bundle beside this script (scripts/gpu-bundle.sh
# builds it); the bundle brings its own Java, so nothing needs to be installed. It prints the device, driver
# and CUDA versions, runs every real-driver test, starts the sample service on CUDA and checks every
# endpoint against references (8 concurrent clients too), runs the GPU benchmarks briefly, and compares
# gpumem's pool with PyTorch's, CuPy's and CUDA's allocators on the same traces. Where no CUDA device is found
# it runs the same checks on the host backend.
#
# Usage: gpu-verify.sh [--out DIR] [--steps NAME,...]
#   --out    default: gpu-verify-out
#   --steps  of tests, sample, benchmarks, allocators (default: all); the device's versions are always reported
# Writes verify.log and summary.json into DIR, beside tests.log, tests.xml, sample.log, benchmarks.log,
# benchmarks.json, service-workload.json, allocators.md, allocators.jsonl and allocators.log.
# Exit codes: 0  everything passed on a CUDA device
#             1  a check failed
#             2  bad arguments, or the bundle could not be unpacked
#             77 no CUDA device here; everything that runs without one passed
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out=gpu-verify-out
steps=()
while [ $# -gt 0 ]; do
  case "$1" in
    --out) [ $# -ge 2 ] || { echo "gpu-verify: --out needs a folder" >&2; exit 2; }; out=$2; shift 2 ;;
    --steps) [ $# -ge 2 ] || { echo "gpu-verify: --steps needs names" >&2; exit 2; }; steps=(--steps "$2"); shift 2 ;;
    *) echo "usage: gpu-verify.sh [--out DIR] [--steps NAME,...]" >&2; exit 2 ;;
  esac
done
mkdir -p "$out" && out=$(cd "$out" && pwd) || { echo "gpu-verify: cannot write to $out" >&2; exit 2; }

archive=$here/gpumem-gpu.tar.xz
unpacked=$(mktemp -d)
trap 'rm -rf "$unpacked"' EXIT
if command -v xz >/dev/null; then
  tar -C "$unpacked" -xJf "$archive"
else
  python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$archive" "$unpacked"
fi || { echo "gpu-verify: $archive could not be unpacked (with xz, or python3 without it)" >&2; exit 2; }

cd "$unpacked/gpumem-gpu"
runtime/bin/java -cp "app:natives:lib/*:tools/*" io.gpumem.verification.GpuVerification --out "$out" ${steps[@]+"${steps[@]}"}
