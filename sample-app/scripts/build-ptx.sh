#!/usr/bin/env bash
# Regenerates the sample's PTX from its CUDA sources with nvcc (no GPU needed).
# nvcc 13 writes PTX ISA 9.0, which only CUDA 13 drivers load; these kernels use nothing newer than
# ISA 8.0, so the file declares 8.0 and loads on CUDA 12.x drivers too. PtxCompileTest proves it by
# compiling every shipped PTX file for sm_75, sm_80 and sm_90 with the PTX compiler of CUDA 12.0.
set -euo pipefail
cd "$(dirname "$0")/../src/main/resources/kernels"
for source in *.cu; do
  ptx="${source%.cu}.ptx"
  nvcc -ptx -arch=compute_75 -O3 -o "$ptx" "$source"
  sed -i -E 's/^\.version [0-9]+\.[0-9]+$/.version 8.0/' "$ptx"
  echo "wrote $ptx"
done
