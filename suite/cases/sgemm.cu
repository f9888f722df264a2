// Case: C = A*B for 4096 x 4096 fp32 matrices with a classic shared-memory
// tiled kernel (16x16 tiles, one output per thread).
// Planted bottleneck: matrix multiplication on the FP32 FMA path; the tensor
// cores are idle. Even a perfect FP32 kernel would sit under the H200's
// ~67 TFLOP/s FP32 ceiling, against ~495 (TF32) or ~990 (BF16) on the tensor
// cores (no_tensor_cores). The fix: a tensor-core GEMM (cuBLAS with TF32 or
// BF16 inputs, or WMMA/WGMMA).
#include "common.cuh"

constexpr int N = 4096, T = 16;

__global__ void sgemm_tiled(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int n) {
  __shared__ float As[T][T], Bs[T][T];
  int row = blockIdx.y * T + threadIdx.y, col = blockIdx.x * T + threadIdx.x;
  float acc = 0.f;
  for (int k0 = 0; k0 < n; k0 += T) {
    As[threadIdx.y][threadIdx.x] = A[(size_t)row * n + k0 + threadIdx.x];
    Bs[threadIdx.y][threadIdx.x] = B[(size_t)(k0 + threadIdx.y) * n + col];
    __syncthreads();
#pragma unroll
    for (int k = 0; k < T; ++k) acc = fmaf(As[threadIdx.y][k], Bs[k][threadIdx.x], acc);
    __syncthreads();
  }
  C[(size_t)row * n + col] = acc;
}

int main() {
  size_t nn = (size_t)N * N;
  float* A = dev_random(nn, 10);
  float* B = dev_random(nn, 11);
  float* C = nullptr;
  CHECK(cudaMalloc(&C, nn * sizeof(float)));
  dim3 grid(N / T, N / T), block(T, T);
  run_steps("sgemm", [&] { sgemm_tiled<<<grid, block>>>(A, B, C, N); CHECK_LAUNCH(); }, 5, 1);
  return 0;
}
