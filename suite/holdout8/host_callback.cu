// Holdout-8 case: a host callback after every kernel. A smoothing pass runs 64 times per step on an 8 MB array
// (a few microseconds each); after each launch the program enqueues cudaLaunchHostFunc(stream, log_progress)
// to count finished passes on the host ("progress reporting"). A host function in a stream blocks that stream
// until the driver's callback thread has been woken, run the function and signalled back: the next kernel
// cannot start until the host has done its part, so every pass leaves the GPU idle for the callback's
// round trip (tens of microseconds) -- longer than the kernel itself.
// Ground truth: host / host_sync (the GPU waits on a host round trip after every kernel).
// The fix: drop the per-kernel callbacks (count on the GPU, or record an event and poll it once per step; one
// callback per step at most): the 64 passes then run back to back, GPU busy near 100%.
#include "../cases/common.cuh"

constexpr size_t N = 1ull << 21;  // 2M floats = 8 MB
constexpr int PASSES = 64;

struct Progress {
  long passes = 0;
};

static void CUDART_CB log_progress(void* p) {
  static_cast<Progress*>(p)->passes += 1;
}

__global__ void smooth(const float* __restrict__ x, float* __restrict__ y, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    const float l = x[i > 0 ? i - 1 : i], r = x[i + 1 < n ? i + 1 : i];
    y[i] = 0.25f * l + 0.5f * x[i] + 0.25f * r;
  }
}

int main() {
  float* a = dev_random(N, 81);
  float* b = nullptr;
  CHECK(cudaMalloc(&b, N * sizeof(float)));
  cudaStream_t st;
  CHECK(cudaStreamCreate(&st));
  Progress prog;
  const int blocks = sm_count() * 4, threads = 256;
  run_steps("host_callback", [&] {
    for (int p = 0; p < PASSES; ++p) {
      smooth<<<blocks, threads, 0, st>>>(p % 2 ? b : a, p % 2 ? a : b, N);
      CHECK_LAUNCH();
      CHECK(cudaLaunchHostFunc(st, log_progress, &prog));  // a host round trip after every pass
    }
  }, 10);
  CHECK(cudaStreamSynchronize(st));
  printf("passes = %ld\n", prog.passes);
  return 0;
}
