// Holdout-8 case: a managed (cudaMallocManaged) record buffer that the CPU refreshes every step. 64 MB of
// records live in unified memory; each step the host rewrites them in place ("the producer writes straight into
// the buffer the GPU reads, no copies"), then launches a kernel that accumulates them on the GPU. The CPU's
// writes fault every page back to host memory (device-to-host migrations), and the kernel then page-faults
// every page back to the GPU (host-to-device migrations driven by GPU faults, far below PCIe copy bandwidth):
// a kernel that would read 64 MB from HBM in ~20 us runs for milliseconds, and the CPU's pass stalls on faults.
// Ground truth: transfer / pageable_transfer (fault-driven page migration every step: the data crosses PCIe
// twice per step by demand paging instead of one bulk copy).
// The fix: write the records into a pinned host buffer and cudaMemcpyAsync them once per step (or
// cudaMemPrefetchAsync the managed range to the GPU before the launch); better, produce them on the GPU.
#include "../cases/common.cuh"

constexpr size_t N = 1ull << 24;  // 16M floats = 64 MB

__global__ void accumulate(const float* __restrict__ rec, float* __restrict__ acc, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    acc[i] += rec[i];
}

int main() {
  float* rec = nullptr;
  float* acc = nullptr;
  CHECK(cudaMallocManaged(&rec, N * sizeof(float)));
  CHECK(cudaMalloc(&acc, N * sizeof(float)));
  CHECK(cudaMemset(acc, 0, N * sizeof(float)));
  const int blocks = sm_count() * 8, threads = 256;
  int seq = 0;
  run_steps("managed_touch", [&] {
    CHECK(cudaStreamSynchronize(0));  // the previous step's kernel is done with the records
    for (size_t i = 0; i < N; ++i) rec[i] = (float)((i + seq) % 97);  // host refreshes every record in place
    ++seq;
    accumulate<<<blocks, threads>>>(rec, acc, N);
    CHECK_LAUNCH();
  }, 10);
  float a0 = 0;
  CHECK(cudaMemcpy(&a0, acc + 3, sizeof(float), cudaMemcpyDeviceToHost));
  printf("acc[3] = %f\n", a0);
  return 0;
}
