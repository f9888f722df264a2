// Case: per-element iterative math on 16M fp32 values, 8 different update rules.
// Planted bottleneck (default build): the rule is chosen by threadIdx.x % 8, so
// every warp holds all 8 rules and executes the 8 loops one after another with
// 4 of 32 lanes active (warp_divergence: ~4 active threads per instruction).
// FIXED build: the rule is chosen by warp index, so all lanes of a warp take
// the same branch; same work, full warps.
#include "common.cuh"

constexpr int N = 1 << 24, ITERS = 256;

__global__ void branchy(const float* __restrict__ x, float* __restrict__ y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
#ifdef FIXED
  int rule = (threadIdx.x >> 5) & 7;
#else
  int rule = threadIdx.x & 7;
#endif
  float v = x[i];
  switch (rule) {
    case 0: for (int k = 0; k < ITERS; ++k) v = v * 0.9999f + 0.0001f; break;
    case 1: for (int k = 0; k < ITERS; ++k) v = v * 1.0001f - 0.0002f; break;
    case 2: for (int k = 0; k < ITERS; ++k) v = fmaf(v, v, -0.25f) * 0.5f; break;
    case 3: for (int k = 0; k < ITERS; ++k) v = v * 0.75f + 0.125f * k; break;
    case 4: for (int k = 0; k < ITERS; ++k) v = fmaf(v, 0.5f, 0.3f) - v * 0.01f; break;
    case 5: for (int k = 0; k < ITERS; ++k) v = (v + 1.5f) * 0.6f; break;
    case 6: for (int k = 0; k < ITERS; ++k) v = fmaf(-v, 0.3f, 0.7f); break;
    default: for (int k = 0; k < ITERS; ++k) v = v * v * 0.1f + 0.2f; break;
  }
  y[i] = v;
}

int main() {
  float* x = dev_random(N, 9);
  float* y = nullptr;
  CHECK(cudaMalloc(&y, N * sizeof(float)));
  run_steps("divergence", [&] { branchy<<<N / 256, 256>>>(x, y, N); CHECK_LAUNCH(); }, 20);
  return 0;
}
