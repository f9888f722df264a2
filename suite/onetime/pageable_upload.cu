// One-time case: one 256 MB upload from pageable host memory, then 5 launches of a kernel that reads
// a row-major 8192 x 8192 matrix by column (consecutive lanes 32 KB apart).
// Ground truth (suite/onetime.toml): the upload is one-time work (~30 ms at ~8 GB/s pageable), reported
// apart; the steady state is the 5 launches of `column_sum_scale`, kernel-bound, uncoalesced_global.
// No step markers.
#include "../cases/common.cuh"

constexpr int N = 8192;

__global__ void column_sum_scale(const float* __restrict__ in, float* __restrict__ out, int n) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i >= (size_t)n * n) return;
  size_t row = i % n, col = i / n;  // consecutive threads walk down a column
  out[i] = 2.0f * in[row * n + col];
}

int main() {
  size_t nn = (size_t)N * N;
  float* h = (float*)malloc(nn * sizeof(float));  // pageable
  for (size_t i = 0; i < nn; ++i) h[i] = (float)((i * 2654435761u) & 0xffff) / 65536.0f;
  float *a = nullptr, *b = nullptr;
  CHECK(cudaMalloc(&a, nn * sizeof(float)));
  CHECK(cudaMalloc(&b, nn * sizeof(float)));
  CHECK(cudaMemcpy(a, h, nn * sizeof(float), cudaMemcpyHostToDevice));
  int reps = env_int("REPS", 5);
  for (int r = 0; r < reps; ++r) {
    column_sum_scale<<<(unsigned)((nn + 255) / 256), 256>>>(a, b, N);
    CHECK_LAUNCH();
  }
  CHECK(cudaDeviceSynchronize());
  float v = 0;
  CHECK(cudaMemcpy(&v, b + 7 * (size_t)N + 5, 4, cudaMemcpyDeviceToHost));
  printf("pageable_upload: check %s\n", v == 2.0f * h[5 * (size_t)N + 7] ? "ok" : "MISMATCH");
  return 0;
}
