// One-time case: a kernel launched exactly once (after one fill kernel). 16384 x 16384 fp32 transpose
// through a float[32][32] shared tile read by column: 32-way shared-memory bank conflicts.
// Ground truth (suite/onetime.toml): no repeated part exists (every kernel runs once), so there is no
// steady state to separate: the single launch of `transpose_once` dominates GPU time, kernel-bound,
// shared_bank_conflict; ncu must profile it at --launch-skip 0. No step markers.
#include "../cases/common.cuh"

constexpr int N = 16384, TILE = 32, ROWS = 8;

__global__ void transpose_once(const float* __restrict__ in, float* __restrict__ out, int n) {
  __shared__ float tile[TILE][TILE];
  int x = blockIdx.x * TILE + threadIdx.x;
  int y = blockIdx.y * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += ROWS) tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * n + x];
  __syncthreads();
  x = blockIdx.y * TILE + threadIdx.x;
  y = blockIdx.x * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += ROWS) out[(size_t)(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
}

int main() {
  size_t nn = (size_t)N * N;
  float* a = dev_random(nn, 9);
  float* b = nullptr;
  CHECK(cudaMalloc(&b, nn * sizeof(float)));
  transpose_once<<<dim3(N / TILE, N / TILE), dim3(TILE, ROWS)>>>(a, b, N);
  CHECK_LAUNCH();
  CHECK(cudaDeviceSynchronize());
  float va = 0, vb = 0;
  CHECK(cudaMemcpy(&va, a + 123 * (size_t)N + 4567, 4, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(&vb, b + 4567 * (size_t)N + 123, 4, cudaMemcpyDeviceToHost));
  printf("launch_once: check %s\n", va == vb ? "ok" : "MISMATCH");
  return va == vb ? 0 : 1;
}
