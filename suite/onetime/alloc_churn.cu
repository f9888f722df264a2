// One-time-work class, recurring: cudaMalloc and cudaFree of a 256 MB buffer around every launch of a
// short streaming kernel, 50 times.
// Ground truth (suite/onetime.toml): the steady state (the repeated launches) is host-bound; the GPU idles
// while the host is inside cudaMalloc/cudaFree (cudaFree also waits for the GPU): allocator_churn, not
// "host computation". Fix: allocate once outside the loop (or a caching/stream-ordered allocator).
// No step markers.
#include "../cases/common.cuh"

__global__ void scale(const float* __restrict__ in, float* __restrict__ out, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    out[i] = 1.5f * in[i];
}

int main() {
  size_t n = 64ull << 20;  // 64M floats = 256 MB
  float* a = dev_random(n, 5);
  int reps = env_int("REPS", 50);
  int blocks = 4 * sm_count();
  for (int r = 0; r < reps; ++r) {
    float* tmp = nullptr;
    CHECK(cudaMalloc(&tmp, n * sizeof(float)));
    scale<<<blocks, 256>>>(a, tmp, n);
    CHECK_LAUNCH();
    CHECK(cudaFree(tmp));
  }
  CHECK(cudaDeviceSynchronize());
  printf("alloc_churn: done\n");
  return 0;
}
