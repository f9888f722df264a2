// Holdout-6 case: "pinned memory makes uploads fast", applied per step. Each step allocates a page-locked
// staging buffer sized for the largest batch (256 MB) with cudaMallocHost, copies the actual 32 MB batch into it
// on the CPU, uploads those 32 MB with cudaMemcpyAsync, runs a short kernel on them, waits, and frees the buffer
// with cudaFreeHost. Allocating and page-locking 256 MB (65536 pages pinned and mapped for the device), then
// unpinning them, costs tens of milliseconds of host/driver time every step; the pinned 32 MB copy takes under
// 1 ms, the CPU fill a few ms and the kernel microseconds. The GPU idles while the host sits in
// cudaMallocHost / cudaFreeHost.
// Ground truth: host / allocator_churn (host allocator: pinned allocation and free every step).
// The fix: allocate the pinned staging buffer once, outside the loop, and reuse it (then the step is the
// ~5 ms upload, and with two buffers the upload overlaps the CPU fill).
#include <cstring>
#include "../cases/common.cuh"

constexpr size_t CAP = 1ull << 26;  // 64M floats = 256 MB: the staging buffer, sized for the largest batch
constexpr size_t N = 1ull << 23;    // 8M floats = 32 MB: the batch actually sent each step

__global__ void normalize(float* __restrict__ v, size_t n, float s) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    v[i] = v[i] * s - 1.0f;
}

int main() {
  std::vector<float> batch(N);  // the application's pageable batch
  for (size_t i = 0; i < N; ++i) batch[i] = (float)(i % 251) * 0.01f;
  float* dev = nullptr;
  CHECK(cudaMalloc(&dev, N * sizeof(float)));
  const int blocks = sm_count() * 4;
  run_steps("pinned_churn", [&] {
    float* stage = nullptr;
    CHECK(cudaMallocHost(&stage, CAP * sizeof(float)));  // pin 256 MB ... every step
    memcpy(stage, batch.data(), N * sizeof(float));
    CHECK(cudaMemcpyAsync(dev, stage, N * sizeof(float), cudaMemcpyHostToDevice));
    normalize<<<blocks, 256>>>(dev, N, 0.5f);
    CHECK_LAUNCH();
    CHECK(cudaStreamSynchronize(0));
    CHECK(cudaFreeHost(stage));  // ... and unpin it again
  }, 10, 2);
  return 0;
}
