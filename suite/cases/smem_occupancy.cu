// Case: streaming scale y = 2x over 16M fp32 elements, 256-thread blocks, many
// waves (grid = 8 blocks per SM).
// Planted bottleneck (default build): each block requests 200 KB of dynamic
// shared memory it barely uses, so only one block (8 warps) fits on an SM:
// theoretical occupancy 12.5%, too few loads in flight to cover DRAM latency
// (occupancy_limit, limiter: shared memory).
// FIXED build: 1 KB of dynamic shared memory; 8 blocks (64 warps) per SM.
#include "common.cuh"

constexpr size_t N = 1 << 24;
#ifdef FIXED
constexpr int SMEM = 1024;
#else
constexpr int SMEM = 200 * 1024;
#endif

__global__ void stream_scale(const float* __restrict__ x, float* __restrict__ y, size_t n) {
  extern __shared__ float scratch[];
  if (threadIdx.x == 0) scratch[0] = 2.0f;
  __syncthreads();
  float a = scratch[0];
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    y[i] = a * x[i];
}

int main() {
  float* x = dev_random(N, 7);
  float* y = nullptr;
  CHECK(cudaMalloc(&y, N * sizeof(float)));
  CHECK(cudaFuncSetAttribute(stream_scale, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM));
  int blocks = sm_count() * 8;
  run_steps("smem_occupancy", [&] { stream_scale<<<blocks, 256, SMEM>>>(x, y, N); CHECK_LAUNCH(); }, 8);
  return 0;
}
