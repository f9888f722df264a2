// Case: z = tanh(a*x + b) * x - c over 64M fp32 elements.
// Planted bottleneck (default build): five separate elementwise kernels, each
// streaming the whole 256 MB tensor in and out of DRAM at near-peak bandwidth:
// ~2.3 GB moved where one pass (512 MB: read x, write z) is enough
// (excess_dram_traffic). Every kernel looks healthy on its own.
// FIXED build: one fused kernel, one read and one write per element.
#include "common.cuh"

constexpr size_t N = 1 << 26;
#define GRID_STRIDE for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)

__global__ void ew_scale(const float* x, float* t, size_t n, float a) { GRID_STRIDE t[i] = a * x[i]; }
__global__ void ew_add(float* t, size_t n, float b) { GRID_STRIDE t[i] += b; }
__global__ void ew_tanh(float* t, size_t n) { GRID_STRIDE t[i] = tanhf(t[i]); }
__global__ void ew_mul(const float* x, float* t, size_t n) { GRID_STRIDE t[i] *= x[i]; }
__global__ void ew_sub(const float* t, float* z, size_t n, float c) { GRID_STRIDE z[i] = t[i] - c; }
__global__ void fused_chain(const float* x, float* z, size_t n, float a, float b, float c) {
  GRID_STRIDE { float v = x[i]; z[i] = tanhf(a * v + b) * v - c; }
}

int main() {
  float* x = dev_random(N, 15);
  float *t, *z;
  CHECK(cudaMalloc(&t, N * sizeof(float)));
  CHECK(cudaMalloc(&z, N * sizeof(float)));
  int blocks = sm_count() * 8, threads = 512;
  run_steps("elementwise_chain", [&] {
#ifdef FIXED
    fused_chain<<<blocks, threads>>>(x, z, N, 0.7f, 0.1f, 0.2f);
#else
    ew_scale<<<blocks, threads>>>(x, t, N, 0.7f);
    ew_add<<<blocks, threads>>>(t, N, 0.1f);
    ew_tanh<<<blocks, threads>>>(t, N);
    ew_mul<<<blocks, threads>>>(x, t, N);
    ew_sub<<<blocks, threads>>>(t, z, N, 0.2f);
#endif
    CHECK_LAUNCH();
  }, 20);
  return 0;
}
