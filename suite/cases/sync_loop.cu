// Case: 2000 iterations; each launches a ~30 us kernel, reads a 4-byte
// "converged?" flag back with a blocking cudaMemcpy, then spends ~20 us of host
// time on bookkeeping (a busy-wait standing in for logging/metrics).
// Planted bottleneck (default build): the blocking copy drains the GPU queue
// every iteration, so the host's bookkeeping and the next launch happen while
// the GPU idles: host and GPU work serialize instead of overlapping (host_sync).
// FIXED build: the flag is read every 100 iterations; the host queues the next
// kernels while the GPU runs, and its bookkeeping overlaps GPU work.
#include "common.cuh"
#include <chrono>

constexpr int N = 1 << 20;
#ifdef FIXED
constexpr int CHECK_EVERY = 100;
#else
constexpr int CHECK_EVERY = 1;
#endif

__global__ void relax(float* v, int* flag, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float x = v[i];
    for (int k = 0; k < 1024; ++k) x = fmaf(x, 0.999f, 0.001f);
    v[i] = x;
    if (i == 0) *flag = x > 10.f;
  }
}

static void host_bookkeeping(double us) {
  auto end = std::chrono::steady_clock::now() + std::chrono::duration<double, std::micro>(us);
  while (std::chrono::steady_clock::now() < end) {
  }
}

int main() {
  float* v = dev_random(N, 17);
  int* flag = nullptr;
  CHECK(cudaMalloc(&flag, sizeof(int)));
  int step = 0, host_flag = 0;
  run_steps("sync_loop", [&] {
    for (int i = 0; i < 20; ++i) {
      relax<<<N / 256, 256>>>(v, flag, N);
      CHECK_LAUNCH();
      if (++step % CHECK_EVERY == 0) CHECK(cudaMemcpy(&host_flag, flag, sizeof(int), cudaMemcpyDeviceToHost));
      host_bookkeeping(20.0);
    }
  }, 100);
  printf("flag %d\n", host_flag);
  return 0;
}
