// The rules of freeing the fake driver shares with CUDA: which free takes which block. Build and run on a GPU
// machine: nvcc -o free-driver-rules scripts/free-driver-rules.c -lcuda && ./free-driver-rules
#include <cuda.h>
#include <stdio.h>
static const char* name(CUresult r) { const char* s = 0; cuGetErrorName(r, &s); return s ? s : "?"; }
int main(void) {
  CUdevice dev; CUcontext ctx; CUdeviceptr p, q; CUstream s;
  cuInit(0); cuDeviceGet(&dev, 0); cuDevicePrimaryCtxRetain(&ctx, dev); cuCtxSetCurrent(ctx);
  cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
  printf("cuMemAlloc: %s\n", name(cuMemAlloc(&p, 1 << 20)));
  printf("cuMemFreeAsync of cuMemAlloc memory: %s\n", name(cuMemFreeAsync(p, s)));
  printf("  then cuStreamSynchronize: %s\n", name(cuStreamSynchronize(s)));
  printf("cuMemAllocAsync: %s\n", name(cuMemAllocAsync(&q, 1 << 20, s)));
  printf("cuMemFree of cuMemAllocAsync memory: %s\n", name(cuMemFree(q)));
  printf("  then cuStreamSynchronize: %s\n", name(cuStreamSynchronize(s)));
  printf("cuMemAlloc again: %s\n", name(cuMemAlloc(&p, 1 << 20)));
  printf("cuMemFreeAsync of an offset into it: %s\n", name(cuMemFreeAsync(p + 256, s)));
  printf("  then cuStreamSynchronize: %s\n", name(cuStreamSynchronize(s)));
  return 0;
}
