// Case: per-thread 32-entry lookup table indexed by data (16M threads).
// Planted bottleneck (default build): the table is a per-thread array indexed
// with run-time values, so the compiler places it in local memory (stack frame,
// LDL/STL in SASS); every lookup is a local-memory load that goes through L1/L2
// (local_memory_spill).
// FIXED build: the table lives in shared memory, laid out [entry][thread] so
// that a warp's lookups of one entry hit 32 different banks.
#include "common.cuh"

constexpr int N = 1 << 24, K = 32, ROUNDS = 64, BLOCK = 128;

__global__ void table_lookup(const int* __restrict__ idx, const float* __restrict__ x, float* __restrict__ y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
#ifdef FIXED
  __shared__ float table_s[K][BLOCK];
#define T(k) table_s[(k)][threadIdx.x]
#else
  float table[K];
#define T(k) table[(k)]
#endif
  float xi = x[i];
#pragma unroll
  for (int k = 0; k < K; ++k) T(k) = xi * (k + 1);
  float s = 0.f;
  int h = idx[i];
  for (int r = 0; r < ROUNDS; ++r) {
    h = h * 1103515245 + 12345;
    int j = (h >> 16) & (K - 1);
    s += T(j);
    T((j * 7 + r) & (K - 1)) = s * 0.5f;
  }
  y[i] = s;
}

int main() {
  float* x = dev_random(N, 3);
  float* y = nullptr;
  int* idx = nullptr;
  CHECK(cudaMalloc(&y, N * sizeof(float)));
  CHECK(cudaMalloc(&idx, N * sizeof(int)));
  fill_hash_int<<<1024, 256>>>(idx, N, 4);
  CHECK_LAUNCH();
  run_steps("local_array", [&] { table_lookup<<<N / BLOCK, BLOCK>>>(idx, x, y, N); CHECK_LAUNCH(); }, 20);
  return 0;
}
