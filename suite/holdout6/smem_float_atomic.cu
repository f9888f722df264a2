// Holdout-6 case: per-class sums (4 classes) of 256M float scores. Each block keeps the 4 running sums in
// shared memory and every thread does `atomicAdd(&sums[cls], v)` on a shared float for every element it reads.
// The class comes from the value, so the 32 lanes of a warp hit the same 4 shared words: each warp-wide atomic
// instruction is serialized over up to 32 colliding lanes (same-address shared atomics on floats are replayed
// lane-group by lane-group), and the 2048 threads of an SM all hammer the same 4 words. The kernel reads only
// 1 GiB (about 0.22 ms at DRAM speed) but takes several times that: DRAM idles while warps wait on the
// serialized shared-memory atomics.
// Ground truth: latency / atomic_contention (shared-memory float atomics on 4 addresses).
// FIXED: each thread accumulates its 4 class sums in registers over its grid-stride loop (float4 loads), then
// one warp-shuffle + shared reduction per block and 4 global atomics per block: the kernel becomes a 1 GiB
// stream.
#include "../cases/common.cuh"

constexpr size_t N = 1ull << 28;  // 256M floats = 1 GiB
constexpr int CLS = 4;

__device__ __forceinline__ int class_of(float v) {  // v in [-1, 1): 4 equal-width classes
  return min(CLS - 1, max(0, (int)((v + 1.0f) * 2.0f)));
}

__global__ void class_sums(const float* __restrict__ x, float* __restrict__ out, size_t n) {
  __shared__ float sums[CLS];
  if (threadIdx.x < CLS) sums[threadIdx.x] = 0.f;
  __syncthreads();
#ifdef FIXED
  float acc[CLS] = {0.f, 0.f, 0.f, 0.f};
  const float4* x4 = reinterpret_cast<const float4*>(x);
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n / 4; i += (size_t)gridDim.x * blockDim.x) {
    float4 v = x4[i];
    float e[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      int c = class_of(e[j]);
#pragma unroll
      for (int k = 0; k < CLS; ++k) acc[k] += (c == k) ? e[j] : 0.f;
    }
  }
#pragma unroll
  for (int k = 0; k < CLS; ++k) {
    float s = acc[k];
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    if ((threadIdx.x & 31) == 0) atomicAdd(&sums[k], s);  // one shared atomic per warp and class
  }
#else
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    float v = x[i];
    atomicAdd(&sums[class_of(v)], v);  // every element: a shared atomic on one of 4 words
  }
#endif
  __syncthreads();
  if (threadIdx.x < CLS) atomicAdd(&out[threadIdx.x], sums[threadIdx.x]);
}

int main() {
  float* x = dev_random(N, 62);
  float* out = nullptr;
  CHECK(cudaMalloc(&out, CLS * sizeof(float)));
  const int blocks = sm_count() * 8, threads = 256;
  run_steps("smem_float_atomic", [&] {
    CHECK(cudaMemsetAsync(out, 0, CLS * sizeof(float)));
    class_sums<<<blocks, threads>>>(x, out, N);
    CHECK_LAUNCH();
  }, 10);
  float h[CLS];
  CHECK(cudaMemcpy(h, out, sizeof(h), cudaMemcpyDeviceToHost));
  printf("class sums: %.1f %.1f %.1f %.1f\n", h[0], h[1], h[2], h[3]);
  return 0;
}
