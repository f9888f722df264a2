// Case: 12 steps; each uploads a 256 MB batch from host memory, then runs a
// short kernel on it.
// Planted bottleneck (default build): the host buffer is pageable (malloc), so
// the driver stages every copy through a pinned bounce buffer at a fraction of
// PCIe/C2C bandwidth (pageable_transfer).
// FIXED build: the host buffer is pinned (cudaMallocHost) and the copy is
// asynchronous. The step stays dominated by the upload (transfer_volume), now
// at full link bandwidth.
#include "common.cuh"
#include <cstring>

constexpr size_t N = 1 << 26;

__global__ void consume(const float* __restrict__ x, float* __restrict__ y, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    y[i] = x[i] * 2.f;
}

int main() {
  float* host = nullptr;
#ifdef FIXED
  CHECK(cudaMallocHost(&host, N * sizeof(float)));
#else
  host = (float*)malloc(N * sizeof(float));
#endif
  for (size_t i = 0; i < N; ++i) host[i] = (float)(i % 1000) * 0.001f;
  float *x, *y;
  CHECK(cudaMalloc(&x, N * sizeof(float)));
  CHECK(cudaMalloc(&y, N * sizeof(float)));
  int blocks = sm_count() * 8;
  run_steps("pageable_copy", [&] {
    CHECK(cudaMemcpyAsync(x, host, N * sizeof(float), cudaMemcpyHostToDevice));
    consume<<<blocks, 512>>>(x, y, N);
    CHECK_LAUNCH();
  }, 12);
  return 0;
}
