// Holdout-6 case: a "generic" strided elementwise kernel (y = a*x + b) of the kind a framework's fallback path
// uses, run on a tensor that is in fact contiguous. Every element decomposes its linear index over 6 runtime
// dimensions with 64-bit `/` and `%` (size_t sizes and strides passed by value) to find its offset. Integer
// division by a runtime divisor has no hardware instruction: each one is a reciprocal-and-correct sequence of
// ~20-40 integer/float instructions (a 64-bit one behind a 32-bit fast-path test). Six of them per element cost
// far more issue slots than the 8 bytes the element moves: the SMs are busy issuing index arithmetic while DRAM
// runs well below its bandwidth.
// Ground truth: compute / instruction_bound (integer division/modulo in index math).
// FIXED: the contiguous fast path the strides allow: offset = linear index, float4 loads and stores, no
// divisions; a plain 2 GiB stream (1 GiB read + 1 GiB written per launch) near DRAM bandwidth (near_peak).
#include "../cases/common.cuh"

constexpr size_t N = 1ull << 28;  // 256M floats = 1 GiB in, 1 GiB out

struct Layout6 {
  size_t size[6];
  size_t stride[6];
};

#ifdef FIXED
__global__ void axpb_strided(const float4* __restrict__ x, float4* __restrict__ y, Layout6 l, size_t n4, float a,
                             float b) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n4; i += (size_t)gridDim.x * blockDim.x) {
    float4 v = x[i];
    v.x = a * v.x + b; v.y = a * v.y + b; v.z = a * v.z + b; v.w = a * v.w + b;
    y[i] = v;
  }
}
#else
__global__ void axpb_strided(const float* __restrict__ x, float* __restrict__ y, Layout6 l, size_t n, float a,
                             float b) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    size_t rem = i, off = 0;
#pragma unroll
    for (int d = 5; d >= 0; --d) {
      size_t q = rem / l.size[d];
      off += (rem % l.size[d]) * l.stride[d];
      rem = q;
    }
    y[off] = a * x[off] + b;
  }
}
#endif

int main() {
  // A contiguous [8, 16, 32, 16, 32, 128] tensor (256M elements): strides are the running products.
  Layout6 l;
  const size_t dims[6] = {8, 16, 32, 16, 32, 128};
  size_t s = 1;
  for (int d = 5; d >= 0; --d) { l.size[d] = dims[d]; l.stride[d] = s; s *= dims[d]; }
  if (s != N) { fprintf(stderr, "bad shape\n"); return 1; }
  float* x = dev_random(N, 61);
  float* y = nullptr;
  CHECK(cudaMalloc(&y, N * sizeof(float)));
  const int blocks = sm_count() * 8, threads = 256;
  run_steps("intdiv_index", [&] {
#ifdef FIXED
    axpb_strided<<<blocks, threads>>>((const float4*)x, (float4*)y, l, N / 4, 1.0001f, 0.5f);
#else
    axpb_strided<<<blocks, threads>>>(x, y, l, N, 1.0001f, 0.5f);
#endif
    CHECK_LAUNCH();
  }, 10);
  return 0;
}
