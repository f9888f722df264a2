// Holdout-7 case: data-dependent loop trip counts. Each element is refined by an iteration whose count comes
// from the data: 1 element in 32 (chosen by a hash of its index, i.e. scattered) needs 1024 iterations, the
// others 16. A warp runs its loop until its slowest lane is done, so a warp holding one heavy element spends
// ~1000 iterations with 1 of 32 lanes active. About 64% of warps hold at least one heavy element: the SMs issue
// ~10x the warp instructions the lane work needs (average lane work ~47 iterations per element), with only a
// few threads active per executed instruction. Memory traffic is small (16M elements x 12 B = 201 MB).
// Ground truth: compute / warp_divergence (divergent trip counts within warps).
// FIXED: the same elements with the same trip counts, stored binned by cost (the heavy 1/32 first, as a
// one-time sort by expected work would leave them): every warp is uniform, ~10x fewer warp instructions.
#include "../cases/common.cuh"

constexpr size_t N = 1ull << 24;  // 16M elements
constexpr int LIGHT = 16, HEAVY = 1024;

__device__ __forceinline__ unsigned mix(unsigned i) {
  unsigned h = i * 2654435761u ^ 0x9e3779b9u;
  h ^= h >> 13; h *= 0x5bd1e995u; h ^= h >> 15;
  return h;
}

__global__ void set_work(int* __restrict__ iters, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
#ifdef FIXED
    const bool heavy = i < n / 32;  // binned: the heavy elements are contiguous
#else
    const bool heavy = (mix((unsigned)i) & 31u) == 0;  // scattered: ~1 in 32, anywhere
#endif
    iters[i] = heavy ? HEAVY : LIGHT;
  }
}

__global__ void refine(const float* __restrict__ x, const int* __restrict__ iters, float* __restrict__ y, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    const float v = x[i];
    const float c = 0.5f * v;
    float z = v;
    const int k = iters[i];
    for (int t = 0; t < k; ++t) z = fmaf(z * 0.5f, z, c);  // |z| stays <= 1
    y[i] = z;
  }
}

int main() {
  float* x = dev_random(N, 74);
  int* iters = nullptr;
  float* y = nullptr;
  CHECK(cudaMalloc(&iters, N * sizeof(int)));
  CHECK(cudaMalloc(&y, N * sizeof(float)));
  set_work<<<1024, 256>>>(iters, N);
  CHECK_LAUNCH();
  const int blocks = sm_count() * 8, threads = 256;
  run_steps("trip_divergence", [&] {
    refine<<<blocks, threads>>>(x, iters, y, N);
    CHECK_LAUNCH();
  }, 10);
  float y0 = 0;
  CHECK(cudaMemcpy(&y0, y, sizeof(float), cudaMemcpyDeviceToHost));
  printf("y[0] = %f\n", y0);
  return 0;
}
