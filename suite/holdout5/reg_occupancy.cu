// Holdout-5 case: a dependent-load chain (each warp follows a linked list of 128-byte segments through a 1 GiB
// table; every lane reads its own word of the segment, so each load is one coalesced 128-byte request) while
// each thread keeps R = 160 floats live in registers across the whole loop (a thread-coarsened tile that is only
// used after the loop). ~170 registers per thread allow one 256-thread block per SM: 8 of 64 warps (12.5%
// theoretical occupancy). Each warp has one load in flight at a time, so bytes in flight = resident warps x
// 128 B and DRAM bandwidth stays a few percent of peak.
// Ground truth: latency / occupancy_limit (limiter: registers). FIXED: R = 4, a few dozen registers, 8 blocks
// (64 warps) per SM: the same chains, 8x more of them in flight.
#include "../cases/common.cuh"

constexpr size_t SEGS = 1 << 23;  // 8M segments x 32 ints x 4 B = 1 GiB
constexpr int HOPS = 256;
#ifdef FIXED
constexpr int R = 4;
#else
constexpr int R = 160;
#endif

__global__ void fill_next(int* next) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < SEGS * 32; i += (size_t)gridDim.x * blockDim.x) {
    size_t seg = i >> 5;
    size_t to = (seg * 2654435761ull + 12345) & (SEGS - 1);  // odd multiplier: a permutation of the segments
    next[i] = (int)(to * 32 + (i & 31));
  }
}

__global__ void chase(const int* __restrict__ next, const float* __restrict__ init, float* __restrict__ out,
                      int hops) {
  size_t tid = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  size_t nthreads = (size_t)gridDim.x * blockDim.x;
  float keep[R];
#pragma unroll
  for (int r = 0; r < R; ++r) keep[r] = init[r * nthreads + tid];
  unsigned p = (unsigned)(((tid >> 5) * 40503ull) & (SEGS - 1)) * 32 + (threadIdx.x & 31);
#pragma unroll 1
  for (int h = 0; h < hops; ++h) {
    p = next[p];
#pragma unroll
    for (int r = 0; r < R; ++r) asm volatile("" : "+f"(keep[r]));  // the tile stays live in registers
  }
  float s = (float)p;
#pragma unroll
  for (int r = 0; r < R; ++r) s += keep[r];
  out[tid] = s;
}

int main() {
  const int blocks = sm_count() * 8, threads = 256;
  const size_t nthreads = (size_t)blocks * threads;
  int* next = nullptr;
  float* out = nullptr;
  CHECK(cudaMalloc(&next, SEGS * 32 * sizeof(int)));
  CHECK(cudaMalloc(&out, nthreads * sizeof(float)));
  fill_next<<<2048, 256>>>(next);
  CHECK_LAUNCH();
  float* init = dev_random(R * nthreads, 52);
  run_steps("reg_occupancy", [&] { chase<<<blocks, threads>>>(next, init, out, HOPS); CHECK_LAUNCH(); }, 10);
  return 0;
}
