// Holdout case: an iterative per-element computation over 1M elements launched as 24 blocks of 512
// threads with a grid-stride loop: 108 of 132 SMs idle.
// Ground truth: low_parallelism.
#include "../cases/common.cuh"

constexpr int N = 1 << 20;

__global__ void iterate(float* v, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    float x = v[i];
    for (int k = 0; k < 200; ++k) x = fmaf(x, 0.999f, 0.001f);
    v[i] = x;
  }
}

int main() {
  float* v = dev_random(N, 32);
  run_steps("small_grid_compute", [&] { iterate<<<24, 512>>>(v, N); CHECK_LAUNCH(); }, 10);
  return 0;
}
