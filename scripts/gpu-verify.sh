#!/usr/bin/env bash
# Proves gpumem's CUDA path on this machine from the GPU bundle beside this script (scripts/gpu-bundle.sh
# builds it); the bundle brings its own Java, so nothing needs to be installed. It prints the device, driver
# and CUDA versions, runs every real-driver test, starts the sample service on CUDA and checks every
# endpoint against references (8 concurrent clients too), and runs the GPU benchmarks briefly. Where no
# CUDA device is found it runs the same checks on the host backend.
#
# Usage: gpu-verify.sh [--out DIR]     (default: gpu-verify-out)
# Writes verify.log and summary.json into DIR, beside tests.log, tests.xml, sample.log, benchmarks.log and
# benchmarks.json.
# Exit codes: 0  everything passed on a CUDA device
#             1  a check failed
#             2  bad arguments, or the bundle could not be unpacked
#             77 no CUDA device here; everything that runs without one passed
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out=gpu-verify-out
while [ $# -gt 0 ]; do
  case "$1" in
    --out) [ $# -ge 2 ] || { echo "gpu-verify: --out needs a folder" >&2; exit 2; }; out=$2; shift 2 ;;
    *) echo "usage: gpu-verify.sh [--out DIR]" >&2; exit 2 ;;
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
runtime/bin/java -cp "app:natives:lib/*:tools/*" io.gpumem.verification.GpuVerification --out "$out"
