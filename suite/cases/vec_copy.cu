// Case: y = 1.5 * x over 256M fp32 elements (1 GB read, 1 GB written) with
// 16-byte loads and stores and a grid of 8 blocks per SM.
// Ground truth: near_peak. The kernel streams at close to the H200's measured
// ~4.3-4.8 TB/s DRAM bandwidth; nothing left to fix in the kernel itself.
#include "common.cuh"

constexpr size_t N = 1 << 28;

__global__ void scale_vec4(const float4* __restrict__ x, float4* __restrict__ y, size_t n4) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n4; i += (size_t)gridDim.x * blockDim.x) {
    float4 v = x[i];
    v.x *= 1.5f; v.y *= 1.5f; v.z *= 1.5f; v.w *= 1.5f;
    y[i] = v;
  }
}

int main() {
  float* x = dev_random(N, 14);
  float* y = nullptr;
  CHECK(cudaMalloc(&y, N * sizeof(float)));
  int blocks = sm_count() * 8;
  run_steps("vec_copy", [&] {
    scale_vec4<<<blocks, 512>>>(reinterpret_cast<const float4*>(x), reinterpret_cast<float4*>(y), N / 4);
    CHECK_LAUNCH();
  }, 20);
  return 0;
}
