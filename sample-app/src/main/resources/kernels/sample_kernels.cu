// Kernels of the gpumem sample service. Regenerate the PTX with sample-app/scripts/build-ptx.sh.
// Float arithmetic is float32 with one rounding per operation (fused multiply-add where the Java side uses
// Math.fma), so that the host backend's Java implementations compute the same values.

#define BLOCK 256

extern "C" __global__ void vector_add(const float* a, const float* b, float* out, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        out[i] = __fadd_rn(a[i], b[i]);
    }
}

extern "C" __global__ void saxpy(float alpha, const float* x, const float* y, float* out, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        out[i] = __fmaf_rn(alpha, x[i], y[i]);
    }
}

__device__ float combine(int op, float a, float b)
{
    switch (op) {
    case 0: return __fadd_rn(a, b);
    case 1: return fminf(a, b);
    default: return fmaxf(a, b);
    }
}

__device__ void atomic_combine(int op, float* target, float value)
{
    if (op == 0) {
        atomicAdd(target, value);
        return;
    }
    int* bits = (int*) target;
    int old = *bits;
    while (true) {
        float current = __int_as_float(old);
        float next = combine(op, current, value);
        if (next == current) {
            return;
        }
        int seen = atomicCAS(bits, old, __float_as_int(next));
        if (seen == old) {
            return;
        }
        old = seen;
    }
}

// op: 0 sum, 1 min, 2 max. result[0] starts at the op's identity (the reduction-buffer cache sets it).
extern "C" __global__ void reduce(int op, const float* values, int n, float identity, float* result)
{
    __shared__ float partial[BLOCK];
    float acc = identity;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        acc = combine(op, acc, values[i]);
    }
    partial[threadIdx.x] = acc;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (threadIdx.x < stride) {
            partial[threadIdx.x] = combine(op, partial[threadIdx.x], partial[threadIdx.x + stride]);
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        atomic_combine(op, result, partial[0]);
    }
}

// Sum of the ranks of nodes without out-edges, into dangling[0] (which starts at 0).
extern "C" __global__ void pagerank_dangling(const float* rank, const int* out_degree, int n, float* dangling)
{
    __shared__ float partial[BLOCK];
    float acc = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        if (out_degree[i] == 0) {
            acc = __fadd_rn(acc, rank[i]);
        }
    }
    partial[threadIdx.x] = acc;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (threadIdx.x < stride) {
            partial[threadIdx.x] = __fadd_rn(partial[threadIdx.x], partial[threadIdx.x + stride]);
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        atomicAdd(dangling, partial[0]);
    }
}

// contribution[u] = rank[u] / out_degree[u], 0 for a node without out-edges.
extern "C" __global__ void pagerank_contribution(const float* rank, const int* out_degree, float* contribution, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        contribution[i] = (out_degree[i] == 0) ? 0.0f : __fdiv_rn(rank[i], (float) out_degree[i]);
    }
}

// next[v] = (1 - d) / n + d * (sum of contribution[u] over in-edges u -> v + dangling / n), in-edges in CSR.
extern "C" __global__ void pagerank_pull(const int* row_start, const int* sources, const float* contribution,
        const float* dangling, float* next, int n, float damping)
{
    float base = __fdiv_rn(1.0f - damping, (float) n);
    float shared_dangling = __fdiv_rn(dangling[0], (float) n);
    for (int v = blockIdx.x * blockDim.x + threadIdx.x; v < n; v += blockDim.x * gridDim.x) {
        float sum = 0.0f;
        for (int k = row_start[v]; k < row_start[v + 1]; k++) {
            sum = __fadd_rn(sum, contribution[sources[k]]);
        }
        next[v] = __fmaf_rn(damping, __fadd_rn(sum, shared_dangling), base);
    }
}
