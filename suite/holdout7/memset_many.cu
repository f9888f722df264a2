// Holdout-7 case: resetting many small buffers one call at a time. A counting kernel keeps 4096 per-bucket
// tables of 4 KB each in one 16 MB pool. Every step clears them with 4096 separate cudaMemsetAsync calls (one
// per bucket, "because each bucket is its own table"), then launches one short kernel that counts 1M keys into
// them. Each cudaMemsetAsync costs microseconds of host/driver time and is a separate GPU operation with its own
// fixed cost, while the 16 MB it clears would take a few microseconds as ONE memset. The step is the time the
// host needs to issue 4097 operations; the counting kernel is tens of microseconds.
// Ground truth: host / launch_overhead (thousands of tiny memset calls per step).
// The fix: the tables are contiguous: one cudaMemsetAsync of the 16 MB pool (or zero inside the kernel).
#include "../cases/common.cuh"

constexpr int BUCKETS = 4096;
constexpr size_t WORDS_PER_BUCKET = 1024;  // 4 KB
constexpr size_t KEYS = 1 << 20;

__global__ void count_keys(const int* __restrict__ keys, unsigned* __restrict__ pool, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    const unsigned k = (unsigned)keys[i];
    atomicAdd(&pool[(k % BUCKETS) * WORDS_PER_BUCKET + (k / BUCKETS) % WORDS_PER_BUCKET], 1u);
  }
}

int main() {
  unsigned* pool = nullptr;
  int* keys = nullptr;
  CHECK(cudaMalloc(&pool, BUCKETS * WORDS_PER_BUCKET * sizeof(unsigned)));
  CHECK(cudaMalloc(&keys, KEYS * sizeof(int)));
  fill_hash_int<<<1024, 256>>>(keys, KEYS, 75);
  CHECK_LAUNCH();
  const int blocks = sm_count() * 4;
  run_steps("memset_many", [&] {
    for (int b = 0; b < BUCKETS; ++b)  // one call per 4 KB table
      CHECK(cudaMemsetAsync(pool + b * WORDS_PER_BUCKET, 0, WORDS_PER_BUCKET * sizeof(unsigned)));
    count_keys<<<blocks, 256>>>(keys, pool, KEYS);
    CHECK_LAUNCH();
  }, 10, 2);
  unsigned h0 = 0;
  CHECK(cudaMemcpy(&h0, pool, sizeof(unsigned), cudaMemcpyDeviceToHost));
  printf("pool[0] = %u\n", h0);
  return 0;
}
