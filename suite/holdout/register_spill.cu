// Holdout case: each thread keeps 48 running sums that are all live across a data-dependent loop; built
// with -maxrregcount=32 so they cannot stay in registers.
// Ground truth: local_memory_spill (register spills: ptxas reports spill stores/loads; SASS has LDL/STL).
#include "../cases/common.cuh"

constexpr int N = 1 << 22, K = 48;

__global__ void many_accumulators(const float* __restrict__ x, float* __restrict__ y, int n, int rounds) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float acc[K];
#pragma unroll
  for (int k = 0; k < K; ++k) acc[k] = x[(i + k) % n];
  for (int r = 0; r < rounds; ++r) {
    float v = x[(i * 7 + r) % n];
#pragma unroll
    for (int k = 0; k < K; ++k) acc[k] = fmaf(acc[k], v, acc[(k + 1) % K]);
  }
  float s = 0.f;
#pragma unroll
  for (int k = 0; k < K; ++k) s += acc[k];
  y[i] = s;
}

int main() {
  float* x = dev_random(N, 21);
  float* y = nullptr;
  CHECK(cudaMalloc(&y, N * sizeof(float)));
  run_steps("register_spill", [&] { many_accumulators<<<N / 256, 256>>>(x, y, N, 64); CHECK_LAUNCH(); }, 10);
  return 0;
}
