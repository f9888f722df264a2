// Holdout case: per-block reduction where each thread first sums a strided row of a shared-memory tile:
// thread t reads tile[t][0..31] with the tile laid out [256][32] floats, so a warp's 32 reads of column j
// hit addresses 128 bytes apart: all in one bank (32-way conflicts), for 64M elements.
// Ground truth: shared_bank_conflict.
#include "../cases/common.cuh"

constexpr int N = 1 << 26, T = 256, W = 32;

__global__ void row_sums(const float* __restrict__ x, float* __restrict__ y, int n) {
  __shared__ float tile[T][W];
  size_t base = (size_t)blockIdx.x * T * W;
  for (int i = threadIdx.x; i < T * W; i += T) tile[i / W][i % W] = x[base + i];  // coalesced fill
  __syncthreads();
  float s = 0.f;
#pragma unroll
  for (int j = 0; j < W; ++j) s += tile[threadIdx.x][(j + 0) % W] * (1.0f + j * 1e-3f);
  for (int rep = 0; rep < 8; ++rep)
#pragma unroll
    for (int j = 0; j < W; ++j) s = fmaf(tile[threadIdx.x][j], 1e-3f, s);
  y[(size_t)blockIdx.x * T + threadIdx.x] = s;
}

int main() {
  float* x = dev_random(N, 31);
  float* y = nullptr;
  CHECK(cudaMalloc(&y, (N / W) * sizeof(float)));
  run_steps("smem_stride_reduce", [&] { row_sums<<<N / (T * W), T>>>(x, y, N); CHECK_LAUNCH(); }, 10);
  return 0;
}
