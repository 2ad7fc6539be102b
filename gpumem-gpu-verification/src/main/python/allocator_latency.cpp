// Times raw alloc+free pairs of GPU allocators for trace_replay.py's `latency` command.
//
// Built at run time by torch.utils.cpp_extension.load (with_cuda=True, which links the CUDA runtime). Each function
// takes (bytes, iterations), runs a few warm-up pairs, then times `iterations` pairs with std::chrono::steady_clock
// around the whole loop and returns the mean nanoseconds per pair. The caller must have initialised CUDA through
// torch first (torch.cuda.init() and one CUDA tensor), or PyTorch's allocator is not set up for the device.

#include <torch/extension.h>

#include <c10/cuda/CUDACachingAllocator.h>
#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdint>

namespace {

constexpr int64_t kWarmUpPairs = 16;

void check(cudaError_t status, const char* call) {
  TORCH_CHECK(status == cudaSuccess, call, " failed: ", cudaGetErrorString(status));
}

void check_arguments(int64_t bytes, int64_t iterations) {
  TORCH_CHECK(bytes > 0, "bytes must be positive, got ", bytes);
  TORCH_CHECK(iterations > 0, "iterations must be positive, got ", iterations);
}

// One non-blocking stream for the whole process, created on first use.
cudaStream_t side_stream() {
  static cudaStream_t stream = [] {
    cudaStream_t created = nullptr;
    check(cudaStreamCreateWithFlags(&created, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    return created;
  }();
  return stream;
}

template <typename Pair, typename Finish>
double nanos_per_pair(int64_t iterations, Pair pair, Finish finish) {
  for (int64_t i = 0; i < kWarmUpPairs; ++i) {
    pair();
  }
  finish();
  const auto start = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < iterations; ++i) {
    pair();
  }
  finish();
  const auto end = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(end - start).count() / static_cast<double>(iterations);
}

// PyTorch's CUDA caching allocator, on the side stream.
double torch_pair(int64_t bytes, int64_t iterations) {
  check_arguments(bytes, iterations);
  const cudaStream_t stream = side_stream();
  const size_t size = static_cast<size_t>(bytes);
  return nanos_per_pair(
      iterations,
      [&] {
        void* ptr = c10::cuda::CUDACachingAllocator::raw_alloc_with_stream(size, stream);
        c10::cuda::CUDACachingAllocator::raw_delete(ptr);
      },
      [] {});
}

// cudaMallocAsync + cudaFreeAsync on the device's default pool, which keeps what it reserved (release threshold at
// UINT64_MAX). The stream is synchronised once at the end of the timed loop.
double cuda_async_pair(int64_t bytes, int64_t iterations) {
  check_arguments(bytes, iterations);
  const cudaStream_t stream = side_stream();
  const size_t size = static_cast<size_t>(bytes);
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  cudaMemPool_t pool = nullptr;
  check(cudaDeviceGetDefaultMemPool(&pool, device), "cudaDeviceGetDefaultMemPool");
  uint64_t threshold = UINT64_MAX;
  check(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold),
        "cudaMemPoolSetAttribute(cudaMemPoolAttrReleaseThreshold)");
  return nanos_per_pair(
      iterations,
      [&] {
        void* ptr = nullptr;
        check(cudaMallocAsync(&ptr, size, stream), "cudaMallocAsync");
        check(cudaFreeAsync(ptr, stream), "cudaFreeAsync");
      },
      [&] { check(cudaStreamSynchronize(stream), "cudaStreamSynchronize"); });
}

// Plain cudaMalloc + cudaFree; slow, so the caller passes fewer iterations.
double cuda_pair(int64_t bytes, int64_t iterations) {
  check_arguments(bytes, iterations);
  const size_t size = static_cast<size_t>(bytes);
  return nanos_per_pair(
      iterations,
      [&] {
        void* ptr = nullptr;
        check(cudaMalloc(&ptr, size), "cudaMalloc");
        check(cudaFree(ptr), "cudaFree");
      },
      [] {});
}

}  // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.doc() = "Mean nanoseconds per alloc+free pair of GPU allocators";
  m.def("torch_pair", &torch_pair, "PyTorch caching allocator raw_alloc_with_stream + raw_delete",
        py::arg("bytes"), py::arg("iterations"));
  m.def("cuda_async_pair", &cuda_async_pair, "cudaMallocAsync + cudaFreeAsync on the default pool",
        py::arg("bytes"), py::arg("iterations"));
  m.def("cuda_pair", &cuda_pair, "cudaMalloc + cudaFree", py::arg("bytes"), py::arg("iterations"));
}
