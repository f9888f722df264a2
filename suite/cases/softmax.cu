// Case: row softmax over a 131072 x 512 fp32 matrix (256 MB in, 256 MB out).
// Planted bottleneck (default build): one thread per row. Adjacent threads of a
// warp walk rows 2 KB apart, so each warp-wide 4-byte load touches 32 different
// 32-byte sectors (uncoalesced_global), and each row is read three times.
// FIXED build: one 128-thread block per row, float4 loads of consecutive
// elements held in registers, warp-shuffle reductions: one coalesced read and
// one write per element, near the DRAM roofline.
#include "common.cuh"
#include <cmath>

constexpr int ROWS = 131072, COLS = 512;

#ifndef FIXED
__global__ void softmax_rows(const float* __restrict__ x, float* __restrict__ y, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const float* xr = x + (size_t)r * cols;
  float* yr = y + (size_t)r * cols;
  float m = -INFINITY;
  for (int j = 0; j < cols; ++j) m = fmaxf(m, xr[j]);
  float s = 0.f;
  for (int j = 0; j < cols; ++j) s += __expf(xr[j] - m);
  float inv = 1.f / s;
  for (int j = 0; j < cols; ++j) yr[j] = __expf(xr[j] - m) * inv;
}
static void launch(const float* x, float* y) {
  softmax_rows<<<(ROWS + 127) / 128, 128>>>(x, y, ROWS, COLS);
}
#else
__device__ float block_reduce(float v, bool is_max) {
  __shared__ float part[4];
  for (int o = 16; o > 0; o >>= 1) {
    float w = __shfl_xor_sync(0xffffffffu, v, o);
    v = is_max ? fmaxf(v, w) : v + w;
  }
  if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = v;
  __syncthreads();
  float r = part[0];
  for (int i = 1; i < 4; ++i) r = is_max ? fmaxf(r, part[i]) : r + part[i];
  __syncthreads();
  return r;
}
__global__ void softmax_rows(const float* __restrict__ x, float* __restrict__ y, int rows, int cols) {
  // cols == 4 * blockDim.x == 512: each thread owns one float4.
  int r = blockIdx.x;
  float4 v = reinterpret_cast<const float4*>(x + (size_t)r * cols)[threadIdx.x];
  float m = block_reduce(fmaxf(fmaxf(v.x, v.y), fmaxf(v.z, v.w)), true);
  float4 e = make_float4(__expf(v.x - m), __expf(v.y - m), __expf(v.z - m), __expf(v.w - m));
  float inv = 1.f / block_reduce(e.x + e.y + e.z + e.w, false);
  e.x *= inv; e.y *= inv; e.z *= inv; e.w *= inv;
  reinterpret_cast<float4*>(y + (size_t)r * cols)[threadIdx.x] = e;
}
static void launch(const float* x, float* y) { softmax_rows<<<ROWS, 128>>>(x, y, ROWS, COLS); }
#endif

int main() {
  size_t n = (size_t)ROWS * COLS;
  float* x = dev_random(n, 1);
  float* y = nullptr;
  CHECK(cudaMalloc(&y, n * sizeof(float)));
  run_steps("softmax", [&] { launch(x, y); CHECK_LAUNCH(); }, 20);
  // Check one row against the host.
  std::vector<float> hx(COLS), hy(COLS);
  CHECK(cudaMemcpy(hx.data(), x + 77 * (size_t)COLS, COLS * 4, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(hy.data(), y + 77 * (size_t)COLS, COLS * 4, cudaMemcpyDeviceToHost));
  double m = -1e30, s = 0, err = 0;
  for (float v : hx) m = std::max(m, (double)v);
  for (float v : hx) s += std::exp(v - m);
  for (int j = 0; j < COLS; ++j) err = std::max(err, std::fabs(std::exp(hx[j] - m) / s - hy[j]));
  printf("max abs error %.2e\n", err);
  return err < 1e-4 ? 0 : 1;
}
