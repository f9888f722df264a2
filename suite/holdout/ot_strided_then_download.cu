// Holdout (issue 9, suite/holdout_onetime.toml): 12 launches of a stride-33 gather, then one 512 MB
// device-to-host copy into pageable memory. No step markers.
#include "../cases/common.cuh"

constexpr size_t N = (size_t)128 << 20;  // 128 Mi floats = 512 MB per buffer

__global__ void strided_gather(const float* __restrict__ in, float* __restrict__ out, size_t n) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[i] = in[(i * 33) % n] * 1.5f;  // neighbouring lanes read 132 bytes apart
}

int main() {
  float* a = dev_random(N, 7);
  float* b = nullptr;
  CHECK(cudaMalloc(&b, N * sizeof(float)));
  int reps = env_int("REPS", 12);
  for (int r = 0; r < reps; ++r) {
    strided_gather<<<(unsigned)((N + 255) / 256), 256>>>(a, b, N);
    CHECK_LAUNCH();
  }
  float* h = (float*)malloc(N * sizeof(float));  // pageable
  CHECK(cudaMemcpy(h, b, N * sizeof(float), cudaMemcpyDeviceToHost));
  double s = 0;
  for (size_t i = 0; i < N; i += 1 << 20) s += h[i];
  printf("strided_then_download: checksum %.3f\n", s);
  return 0;
}
