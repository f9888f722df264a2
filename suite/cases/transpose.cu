// Case: 8192 x 8192 fp32 transpose through a 32x32 shared-memory tile.
// Planted bottleneck (default build): the tile is float[32][32]; threads of a
// warp read a tile column, 32 addresses 128 bytes apart, all in one bank: a
// 32-way shared-memory bank conflict on every load (shared_bank_conflict).
// FIXED build: the tile is float[32][33]; the pad puts a column's words in 32
// different banks.
#include "common.cuh"

constexpr int N = 8192, TILE = 32, ROWS_PER_PASS = 8;
#ifdef FIXED
constexpr int PAD = 1;
#else
constexpr int PAD = 0;
#endif

__global__ void transpose_tile(const float* __restrict__ in, float* __restrict__ out, int n) {
  __shared__ float tile[TILE][TILE + PAD];
  int x = blockIdx.x * TILE + threadIdx.x;
  int y = blockIdx.y * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += ROWS_PER_PASS) tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * n + x];
  __syncthreads();
  x = blockIdx.y * TILE + threadIdx.x;
  y = blockIdx.x * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += ROWS_PER_PASS) out[(size_t)(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
}

int main() {
  size_t n = (size_t)N * N;
  float* a = dev_random(n, 2);
  float* b = nullptr;
  CHECK(cudaMalloc(&b, n * sizeof(float)));
  dim3 grid(N / TILE, N / TILE), block(TILE, ROWS_PER_PASS);
  run_steps("transpose", [&] { transpose_tile<<<grid, block>>>(a, b, N); CHECK_LAUNCH(); }, 20);
  float va = 0, vb = 0;
  CHECK(cudaMemcpy(&va, a + 123 * (size_t)N + 4567, 4, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(&vb, b + 4567 * (size_t)N + 123, 4, cudaMemcpyDeviceToHost));
  printf("check %s\n", va == vb ? "ok" : "MISMATCH");
  return va == vb ? 0 : 1;
}
