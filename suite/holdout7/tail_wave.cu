// Holdout-7 case: wave quantization (the tail effect). Each block stages a 128 KB coefficient tile in shared
// memory (so only ONE 1024-thread block fits on an SM: 2 x 128 KB > 228 KB) and then runs ~0.9 ms of FP32 FMA
// work (16 independent accumulators per thread, 12288 terms each). The grid is one block per work item, and
// there are SM count + 1 = 133 work items: the first wave runs 132 blocks on the 132 SMs, then the 133rd block
// runs ALONE for another full block time while 131 SMs idle. The kernel takes ~2x one wave for 1.008 waves of
// work; while an SM is active its FMA pipe is busy, but averaged over the kernel's duration the SMs are idle
// about half the time.
// Ground truth: latency / low_parallelism (a 1.008-wave grid of long blocks: the last wave is one block).
// FIXED: the same work split 16 ways (each block sums 1/16 of the terms of one item and atomically adds its
// partial): 2128 short blocks = 16.1 waves, the partial last wave costs 1/16 of a block time; ~1.06x one wave.
#include "../cases/common.cuh"

constexpr int THREADS = 1024;
constexpr int TILE = 32768;   // floats: 128 KB of dynamic shared memory per block
constexpr int TERMS = 12288;  // terms per work item
constexpr int ACC = 16;
#ifdef FIXED
constexpr int SPLIT = 16;
#else
constexpr int SPLIT = 1;
#endif

__global__ void __launch_bounds__(THREADS, 1) poly_tile(const float* __restrict__ coef, const float* __restrict__ x,
                                                       float* __restrict__ y) {
  extern __shared__ float tile[];
  const int item = blockIdx.x / SPLIT, part = blockIdx.x % SPLIT;
  for (int i = threadIdx.x; i < TILE; i += THREADS) tile[i] = coef[(size_t)(item % 8) * TILE + i];
  __syncthreads();
  const size_t g = (size_t)item * THREADS + threadIdx.x;
  const float v = x[g];
  float a[ACC], s[ACC];
#pragma unroll
  for (int j = 0; j < ACC; ++j) { a[j] = 0.f; s[j] = v + 0.01f * j; }
  const int t0 = part * (TERMS / SPLIT), t1 = t0 + TERMS / SPLIT;
  for (int t = t0; t < t1; ++t) {
    const float c = tile[(t * 32 + (threadIdx.x & 31)) & (TILE - 1)];
#pragma unroll
    for (int j = 0; j < ACC; ++j) a[j] = fmaf(s[j], c, a[j]);
  }
  float sum = 0.f;
#pragma unroll
  for (int j = 0; j < ACC; ++j) sum += a[j];
  atomicAdd(&y[g], sum);
}

int main() {
  const int items = sm_count() + 1;  // 133 on a 132-SM H200
  const size_t smem = TILE * sizeof(float);
  CHECK(cudaFuncSetAttribute(poly_tile, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
  float* coef = dev_random((size_t)8 * TILE, 72);
  float* x = dev_random((size_t)items * THREADS, 73);
  float* y = nullptr;
  CHECK(cudaMalloc(&y, (size_t)items * THREADS * sizeof(float)));
  printf("work items %d, blocks %d, split %d\n", items, items * SPLIT, SPLIT);
  run_steps("tail_wave", [&] {
    CHECK(cudaMemsetAsync(y, 0, (size_t)items * THREADS * sizeof(float)));
    poly_tile<<<items * SPLIT, THREADS, smem>>>(coef, x, y);
    CHECK_LAUNCH();
  }, 10);
  float y0 = 0;
  CHECK(cudaMemcpy(&y0, y, sizeof(float), cudaMemcpyDeviceToHost));
  printf("y[0] = %f\n", y0);
  return 0;
}
