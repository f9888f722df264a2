// Holdout case: out-of-place transpose of a 8192 x 8192 fp32 matrix without shared memory: each thread
// reads along a row (coalesced) and writes down a column, so a warp's 32 stores land 32 KB apart.
// Ground truth: uncoalesced_global (on the stores).
#include "../cases/common.cuh"

constexpr int N = 8192;

__global__ void naive_transpose(const float* __restrict__ in, float* __restrict__ out, int n) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y;
  out[(size_t)x * n + y] = in[(size_t)y * n + x];
}

int main() {
  size_t nn = (size_t)N * N;
  float* a = dev_random(nn, 22);
  float* b = nullptr;
  CHECK(cudaMalloc(&b, nn * sizeof(float)));
  dim3 grid(N / 256, N);
  run_steps("strided_store", [&] { naive_transpose<<<grid, 256>>>(a, b, N); CHECK_LAUNCH(); }, 10);
  return 0;
}
