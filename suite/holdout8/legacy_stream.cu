// Holdout-8 case: independent work on eight streams, serialized by the legacy default stream. Each step launches
// eight independent small kernels (16 blocks each, a dependent FMA chain of ~80 us) on eight streams made with
// cudaStreamCreate, meant to run side by side (8 x 16 = 128 blocks fit on 132 SMs at once). Before each launch
// the kernel's completion counter is cleared with cudaMemsetAsync(ptr, 0, 4) -- without a stream argument, so
// on the LEGACY default stream, which waits for all work in every blocking stream and makes all of them wait
// for it. Every memset is a barrier: the eight kernels run one after another, each on 16 of 132 SMs.
// Ground truth: latency / low_parallelism (each kernel fills 16 of 132 SMs and the barriers forbid overlap).
// FIXED: the memset goes to the kernel's own stream: the eight kernels overlap (~8x shorter step).
#include "../cases/common.cuh"

constexpr int NS = 8, BLOCKS = 16, THREADS = 256, ITERS = 20000;

__global__ void chain_fma(float* __restrict__ out, unsigned* __restrict__ done, int iters) {
  float a = threadIdx.x * 1e-3f, b = blockIdx.x * 1e-3f + 0.5f;
  for (int k = 0; k < iters; ++k) {
    a = fmaf(a, 0.9999f, b);
    b = fmaf(b, 0.9998f, a * 1e-4f);
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = a + b;
  if (threadIdx.x == 0) atomicAdd(done, 1u);
}

int main() {
  cudaStream_t st[NS];
  for (int s = 0; s < NS; ++s) CHECK(cudaStreamCreate(&st[s]));  // blocking streams (sync with stream 0)
  float* out = nullptr;
  unsigned* done = nullptr;
  CHECK(cudaMalloc(&out, NS * BLOCKS * THREADS * sizeof(float)));
  CHECK(cudaMalloc(&done, NS * sizeof(unsigned)));
  run_steps("legacy_stream", [&] {
    for (int s = 0; s < NS; ++s) {
#ifdef FIXED
      CHECK(cudaMemsetAsync(done + s, 0, sizeof(unsigned), st[s]));  // on the kernel's own stream
#else
      CHECK(cudaMemsetAsync(done + s, 0, sizeof(unsigned)));  // legacy default stream: a device-wide barrier
#endif
      chain_fma<<<BLOCKS, THREADS, 0, st[s]>>>(out + s * BLOCKS * THREADS, done + s, ITERS);
      CHECK_LAUNCH();
    }
  }, 10);
  unsigned d0 = 0;
  CHECK(cudaMemcpy(&d0, done, sizeof(unsigned), cudaMemcpyDeviceToHost));
  printf("done[0] = %u\n", d0);
  return 0;
}
