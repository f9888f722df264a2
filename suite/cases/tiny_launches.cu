// Case: 100 steps of 200 launches each of a one-warp kernel that touches 32
// floats (~2 us of GPU work per launch).
// Planted bottleneck: the host cannot issue launches as fast as the GPU retires
// them; the GPU idles between kernels (launch_overhead). The fix: fewer, larger
// launches (batch the work into one kernel) or a CUDA graph.
#include "common.cuh"

constexpr int LAUNCHES_PER_STEP = 200;

__global__ void tiny_update(float* v) { v[threadIdx.x] = v[threadIdx.x] * 1.0001f + 0.0001f; }

int main() {
  float* v = dev_random(32, 16);
  run_steps("tiny_launches", [&] {
    for (int i = 0; i < LAUNCHES_PER_STEP; ++i) tiny_update<<<1, 32>>>(v);
    CHECK_LAUNCH();
  }, 100);
  return 0;
}
