// Holdout-8 case: an input table kept in zero-copy mapped host memory. A 128 MB float table is allocated with
// cudaHostAlloc(..., cudaHostAllocMapped) "so the GPU can read it without a copy", filled once by the CPU, and
// the kernel reads it through the mapped device pointer on EVERY launch. The table never changes, but each
// launch pulls all 128 MB across PCIe (tens of GB/s at best) instead of reading it from HBM (~4.8 TB/s): no
// cudaMemcpy shows up in the timeline, the transfer hides inside a long kernel whose DRAM throughput is ~0.
// Ground truth: transfer / transfer_volume (128 MB crosses PCIe per launch for data that never changes).
// FIXED: the table is uploaded once (cudaMemcpy from the same pinned buffer) and the kernel reads the device
// copy: 128 MB read + 128 MB written from HBM per launch.
#include "../cases/common.cuh"

constexpr size_t N = 1ull << 25;  // 32M floats = 128 MB

__global__ void scale_table(const float* __restrict__ in, float* __restrict__ out, size_t n, float a) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    out[i] = in[i] * a + 1.0f;
}

int main() {
  float* host = nullptr;
#ifdef FIXED
  CHECK(cudaMallocHost(&host, N * sizeof(float)));
#else
  CHECK(cudaHostAlloc(&host, N * sizeof(float), cudaHostAllocMapped));
#endif
  for (size_t i = 0; i < N; ++i) host[i] = (float)(i % 1000) * 1e-3f;  // the table, written once by the CPU
  const float* in = nullptr;
#ifdef FIXED
  float* dev = nullptr;
  CHECK(cudaMalloc(&dev, N * sizeof(float)));
  CHECK(cudaMemcpy(dev, host, N * sizeof(float), cudaMemcpyHostToDevice));  // once
  in = dev;
#else
  float* mapped = nullptr;
  CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&mapped), host, 0));
  in = mapped;  // every launch reads host memory over PCIe
#endif
  float* out = nullptr;
  CHECK(cudaMalloc(&out, N * sizeof(float)));
  const int blocks = sm_count() * 8, threads = 256;
  run_steps("zero_copy", [&] {
    scale_table<<<blocks, threads>>>(in, out, N, 1.5f);
    CHECK_LAUNCH();
  }, 10);
  float o0 = 0;
  CHECK(cudaMemcpy(&o0, out + 7, sizeof(float), cudaMemcpyDeviceToHost));
  printf("out[7] = %f\n", o0);
  return 0;
}
