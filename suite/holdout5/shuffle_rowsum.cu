// Holdout-5 case: row sums of an [8M x 32] float matrix (1 GiB), one warp per row. Each lane loads one element
// (one coalesced 128-byte request per row), then the naive reduction has every lane fetch all 32 values with
// __shfl_sync(FULL, v, k), k = 0..31: 32 SHFL + 32 FADD per 32 loaded floats. The shuffle path retires about
// one warp-wide SHFL per clock per SM, so the kernel is bound by instruction issue on the shuffle path, several
// times above its DRAM floor (1 GiB read).
// Ground truth: compute / instruction_bound. FIXED: a 5-step __shfl_xor_sync butterfly: 5 SHFL per row, the
// kernel then streams at DRAM speed.
#include "../cases/common.cuh"

constexpr size_t ROWS = 1 << 23;  // x 32 floats = 1 GiB

__global__ void row_sums(const float* __restrict__ m, float* __restrict__ out, size_t rows) {
  const unsigned FULL = 0xffffffffu;
  const int lane = threadIdx.x & 31;
  const size_t warp = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) >> 5;
  const size_t nwarps = ((size_t)gridDim.x * blockDim.x) >> 5;
  for (size_t r = warp; r < rows; r += nwarps) {
    float v = m[r * 32 + lane];
#ifdef FIXED
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(FULL, v, o);
    float s = v;
#else
    float s = 0.f;
#pragma unroll
    for (int k = 0; k < 32; ++k) s += __shfl_sync(FULL, v, k);  // every lane gathers every lane's value
#endif
    if (lane == 0) out[r] = s;
  }
}

int main() {
  float* m = dev_random(ROWS * 32, 53);
  float* out = nullptr;
  CHECK(cudaMalloc(&out, ROWS * sizeof(float)));
  const int blocks = sm_count() * 8;
  run_steps("shuffle_rowsum", [&] { row_sums<<<blocks, 256>>>(m, out, ROWS); CHECK_LAUNCH(); }, 10);
  return 0;
}
