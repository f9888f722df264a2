// Holdout-5 case: a simulation step updates a 16 MB slice of a 1 GiB state in place, but first snapshots the
// WHOLE state with cudaMemcpyAsync(..., cudaMemcpyDeviceToDevice) "for rollback". The device-to-device copy
// reads and writes 1 GiB each step (about 0.5 ms at the device's copy bandwidth, no PCIe involved) against
// ~10 us of kernel work: the copy is nearly all of the GPU time.
// Ground truth: transfer / transfer_volume (the volume of a copy that need not happen; pinning is irrelevant,
// the copy never leaves the GPU). Fix: snapshot only the slice that is about to change (16 MB), or swap buffers.
#include "../cases/common.cuh"

constexpr size_t N = 1ull << 28;      // 256M floats = 1 GiB of state
constexpr size_t SLICE = 1ull << 22;  // 4M floats = 16 MB updated per step

__global__ void update_slice(float* __restrict__ s, size_t off, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    s[off + i] = s[off + i] * 0.5f + 1.0f;
}

int main() {
  float* state = dev_random(N, 54);
  float* snapshot = nullptr;
  CHECK(cudaMalloc(&snapshot, N * sizeof(float)));
  const int blocks = sm_count() * 4;
  size_t step = 0;
  run_steps("d2d_snapshot", [&] {
    CHECK(cudaMemcpyAsync(snapshot, state, N * sizeof(float), cudaMemcpyDeviceToDevice));
    update_slice<<<blocks, 256>>>(state, (step++ * SLICE) % N, SLICE);
    CHECK_LAUNCH();
  }, 20);
  return 0;
}
