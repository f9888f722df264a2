// Holdout-5 case: an FP32 damping iteration written with double-precision literals (0.999, 0.001 instead of
// 0.999f, 0.001f). C++ promotes `x * 0.999 + 0.001` to double, so each of the 128 iterations converts x to
// FP64, runs a DFMA, and converts back to float (F2F.F64.F32, DFMA, F2F.F32.F64 in SASS). The conversions run
// at a small fraction of the FFMA rate: the SMs spend their issue slots on type conversions, not useful math.
// Ground truth: compute / instruction_bound. FIXED: float literals, one FFMA per iteration on the FP32 pipe.
#include "../cases/common.cuh"

constexpr size_t N = 1 << 25;  // 32M floats, 128 MB: read once, written once
constexpr int ITERS = 128;

__global__ void damp(float* __restrict__ v, size_t n) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = v[i];
#pragma unroll 8
  for (int k = 0; k < ITERS; ++k) {
#ifdef FIXED
    x = x * 0.999f + 0.001f;
#else
    x = x * 0.999 + 0.001;  // double literals: promoted to FP64 and back every iteration
#endif
  }
  v[i] = x;
}

int main() {
  float* v = dev_random(N, 51);
  run_steps("fp64_promotion", [&] { damp<<<(unsigned)(N / 256), 256>>>(v, N); CHECK_LAUNCH(); }, 10);
  return 0;
}
