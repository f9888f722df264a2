// Holdout-6 case: C = A*B for 4096 x 4096 matrices whose inputs are already stored in half precision (fp16, as
// a mixed-precision model keeps its weights and activations), multiplied by a hand-written register-blocked
// GEMM (128x128 block tile, 8x8 outputs per thread) that converts each half to float in shared memory and
// accumulates with FP32 FFMA. The data is in the tensor cores' format, but the math runs on the FP32 FMA pipe:
// 137 GFLOP per product against ~67 TFLOP/s for FP32 FMA (132 SMs x 128 lanes x 2 x 1.98 GHz), versus several
// hundred TFLOP/s for fp16 on the tensor cores (mma.sync / wgmma, or cuBLAS cublasGemmEx with fp16 inputs and
// FP32 accumulation). Memory traffic is small (the half inputs are 32 MB each).
// Ground truth: compute / no_tensor_cores (half inputs, FP32 FMA math).
#include <cuda_fp16.h>
#include "../cases/common.cuh"

constexpr int N = 4096, BM = 128, BN = 128, BK = 8, TM = 8, TN = 8;

__global__ void __launch_bounds__(256) hgemm_fp32_fma(const __half* __restrict__ A, const __half* __restrict__ B,
                                                      float* __restrict__ C, int n) {
  __shared__ float As[BK][BM];  // transposed: As[k][row]
  __shared__ float Bs[BK][BN];
  const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
  const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
  const int a_row = tid / 2, a_k = (tid % 2) * 4;    // A tile: 128 rows x 8 k, 4 halfs per thread
  const int b_k = tid / 32, b_col = (tid % 32) * 4;  // B tile: 8 k x 128 cols, 4 halfs per thread
  float acc[TM][TN] = {};
  for (int k0 = 0; k0 < n; k0 += BK) {
    const __half2* pa = reinterpret_cast<const __half2*>(A + (size_t)(row0 + a_row) * n + k0 + a_k);
    const __half2* pb = reinterpret_cast<const __half2*>(B + (size_t)(k0 + b_k) * n + col0 + b_col);
    float2 a01 = __half22float2(pa[0]), a23 = __half22float2(pa[1]);
    float2 b01 = __half22float2(pb[0]), b23 = __half22float2(pb[1]);
    As[a_k + 0][a_row] = a01.x; As[a_k + 1][a_row] = a01.y;
    As[a_k + 2][a_row] = a23.x; As[a_k + 3][a_row] = a23.y;
    *reinterpret_cast<float4*>(&Bs[b_k][b_col]) = make_float4(b01.x, b01.y, b23.x, b23.y);
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      float a[TM], b[TN];
      *reinterpret_cast<float4*>(&a[0]) = *reinterpret_cast<const float4*>(&As[k][ty * TM]);
      *reinterpret_cast<float4*>(&a[4]) = *reinterpret_cast<const float4*>(&As[k][ty * TM + 4]);
      *reinterpret_cast<float4*>(&b[0]) = *reinterpret_cast<const float4*>(&Bs[k][tx * TN]);
      *reinterpret_cast<float4*>(&b[4]) = *reinterpret_cast<const float4*>(&Bs[k][tx * TN + 4]);
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    float* pc = C + (size_t)(row0 + ty * TM + i) * n + col0 + tx * TN;
    *reinterpret_cast<float4*>(pc) = make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
    *reinterpret_cast<float4*>(pc + 4) = make_float4(acc[i][4], acc[i][5], acc[i][6], acc[i][7]);
  }
}

__global__ void to_half(const float* __restrict__ s, __half* __restrict__ d, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    d[i] = __float2half(s[i]);
}

int main() {
  const size_t nn = (size_t)N * N;
  float* tmp = dev_random(nn, 63);
  __half *A = nullptr, *B = nullptr;
  float* C = nullptr;
  CHECK(cudaMalloc(&A, nn * sizeof(__half)));
  CHECK(cudaMalloc(&B, nn * sizeof(__half)));
  CHECK(cudaMalloc(&C, nn * sizeof(float)));
  to_half<<<1024, 256>>>(tmp, A, nn);
  fill_hash<<<1024, 256>>>(tmp, nn, 64);
  to_half<<<1024, 256>>>(tmp, B, nn);
  CHECK_LAUNCH();
  dim3 grid(N / BN, N / BM);
  run_steps("half_fma_gemm", [&] { hgemm_fp32_fma<<<grid, 256>>>(A, B, C, N); CHECK_LAUNCH(); }, 5, 1);
  float c0 = 0;
  CHECK(cudaMemcpy(&c0, C, sizeof(float), cudaMemcpyDeviceToHost));
  printf("C[0] = %f\n", c0);
  return 0;
}
