// Case: y = a*x + y over 4M fp32 elements (48 MB of traffic per call) with a
// grid-stride loop of 1024-thread blocks.
// Planted bottleneck (default build): the grid is 16 blocks: 16 of the GPU's
// 132 SMs do all the work, so memory throughput stays far below peak
// (low_parallelism).
// FIXED build: the grid is 2 blocks per SM (264 on an H200), a full wave.
#include "common.cuh"

constexpr size_t N = 1 << 22;

__global__ void saxpy_grid_stride(float a, const float* __restrict__ x, float* __restrict__ y, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    y[i] = a * x[i] + y[i];
}

int main() {
  float* x = dev_random(N, 5);
  float* y = dev_random(N, 6);
#ifdef FIXED
  int blocks = sm_count() * 2;
#else
  int blocks = 16;
#endif
  run_steps("grid_stride", [&] { saxpy_grid_stride<<<blocks, 1024>>>(1.0001f, x, y, N); CHECK_LAUNCH(); }, 10);
  return 0;
}
