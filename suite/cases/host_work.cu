// Case: 60 steps; each launches ~0.15 ms of GPU work, then the host spends a few
// ms preparing the next batch on the CPU (generating and sorting 50k values).
// Planted bottleneck: the GPU waits for the host's own computation between
// launches; there is no synchronization and few launches (host_work). The fix:
// overlap the host work with the GPU (prepare batch i+1 on another thread or
// ahead of time) or move it to the GPU.
#include "common.cuh"
#include <random>

constexpr int N = 1 << 24;

__global__ void work(float* v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float x = v[i];
    for (int k = 0; k < 256; ++k) x = fmaf(x, 0.999f, 0.001f);
    v[i] = x;
  }
}

int main() {
  float* v = dev_random(N, 18);
  std::mt19937 rng(42);
  std::vector<float> batch(50000);
  double checksum = 0;
  run_steps("host_work", [&] {
    work<<<N / 256, 256>>>(v, N);
    CHECK_LAUNCH();
    for (auto& b : batch) b = (float)rng() / 4294967296.0f;
    std::sort(batch.begin(), batch.end());
    checksum += batch[batch.size() / 2];
  }, 60);
  printf("checksum %.4f\n", checksum);
  return 0;
}
