// Case: bf16 8192 x 8192 x 8192 GEMM through cuBLAS (fp32 accumulate).
// Ground truth: near_peak. cuBLAS runs it on the warp-group tensor-core path
// (HGMMA) close to the measured ~785 TFLOP/s bf16 ceiling of the H200; its low
// occupancy and high register count are by design, not problems.
#include "common.cuh"
#include <cublas_v2.h>
#include <cuda_bf16.h>

constexpr int N = 8192;

__global__ void to_bf16(const float* in, __nv_bfloat16* out, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    out[i] = __float2bfloat16(in[i]);
}

int main() {
  size_t nn = (size_t)N * N;
  float* tmp = dev_random(nn, 12);
  __nv_bfloat16 *A, *B, *C;
  CHECK(cudaMalloc(&A, nn * 2));
  CHECK(cudaMalloc(&B, nn * 2));
  CHECK(cudaMalloc(&C, nn * 2));
  to_bf16<<<1024, 256>>>(tmp, A, nn);
  fill_hash<<<1024, 256>>>(tmp, nn, 13);
  to_bf16<<<1024, 256>>>(tmp, B, nn);
  CHECK_LAUNCH();
  CHECK(cudaFree(tmp));
  cublasHandle_t h;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) { fprintf(stderr, "cublasCreate failed\n"); return 1; }
  float alpha = 1.f, beta = 0.f;
  run_steps("cublas_gemm", [&] {
    cublasStatus_t s = cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, N, N, N, &alpha, A, CUDA_R_16BF, N, B, CUDA_R_16BF, N,
                                    &beta, C, CUDA_R_16BF, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    if (s != CUBLAS_STATUS_SUCCESS) { fprintf(stderr, "cublasGemmEx failed %d\n", (int)s); exit(1); }
  }, 20);
  cublasDestroy(h);
  return 0;
}
