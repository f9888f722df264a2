// Case: 4-bin histogram of 64M integers.
// Planted bottleneck (default build): every thread does a global atomicAdd to
// one of 4 counters; all 64M updates serialize on 4 addresses in L2
// (atomic_contention).
// FIXED build: each block counts into shared memory, then adds its 4 totals to
// global memory: 4 global atomics per block instead of one per element.
#include "common.cuh"

constexpr size_t N = 1 << 26;
constexpr int BINS = 4;

__global__ void histogram(const int* __restrict__ v, unsigned* __restrict__ bins, size_t n) {
#ifdef FIXED
  __shared__ unsigned local[BINS];
  if (threadIdx.x < BINS) local[threadIdx.x] = 0;
  __syncthreads();
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    atomicAdd(&local[v[i] & (BINS - 1)], 1u);
  __syncthreads();
  if (threadIdx.x < BINS) atomicAdd(&bins[threadIdx.x], local[threadIdx.x]);
#else
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    atomicAdd(&bins[v[i] & (BINS - 1)], 1u);
#endif
}

int main() {
  int* v = nullptr;
  unsigned* bins = nullptr;
  CHECK(cudaMalloc(&v, N * sizeof(int)));
  CHECK(cudaMalloc(&bins, BINS * sizeof(unsigned)));
  fill_hash_int<<<1024, 256>>>(v, N, 8);
  CHECK_LAUNCH();
  int blocks = sm_count() * 8;
  run_steps("histogram", [&] {
    CHECK(cudaMemsetAsync(bins, 0, BINS * sizeof(unsigned)));
    histogram<<<blocks, 256>>>(v, bins, N);
    CHECK_LAUNCH();
  }, 10);
  unsigned h[BINS];
  CHECK(cudaMemcpy(h, bins, sizeof(h), cudaMemcpyDeviceToHost));
  unsigned long long total = 0;
  for (unsigned c : h) total += c;
  printf("total %llu (expect %zu)\n", total, N);
  return total == N ? 0 : 1;
}
