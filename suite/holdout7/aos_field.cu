// Holdout-7 case: a particle system stored as an array of structs (AoS): struct Particle { x, y, z, vx, vy, vz,
// mass, charge } = 32 bytes per particle, 64M particles = 2 GiB. The kernel computes the force of a uniform
// field on every particle, fx[i] = charge[i] * E, which needs ONE 4-byte field per particle. Because the fields
// are interleaved, a warp's 32 loads of `charge` are 32 bytes apart: every lane touches its own 32-byte sector
// (32 sectors per request instead of 4), and DRAM delivers all 2 GiB of particles to use 256 MB of them. The
// kernel can stream at a high fraction of DRAM bandwidth and still be ~4x slower than it needs to be: 7/8 of
// every fetched sector is thrown away.
// Ground truth: memory / uncoalesced_global (AoS field access: 4 useful bytes per 32-byte sector).
// FIXED: structure of arrays (SoA): charge[] is its own contiguous array; a warp's loads are 128 contiguous
// bytes (4 sectors per request); 256 MB read + 256 MB written per launch, near DRAM bandwidth (near_peak).
#include "../cases/common.cuh"

constexpr size_t N = 1ull << 26;  // 64M particles

struct Particle {
  float x, y, z, vx, vy, vz, mass, charge;  // 32 bytes
};

#ifdef FIXED
__global__ void field_force(const float* __restrict__ charge, float* __restrict__ fx, size_t n, float e) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    fx[i] = charge[i] * e;
}
#else
__global__ void field_force(const Particle* __restrict__ p, float* __restrict__ fx, size_t n, float e) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    fx[i] = p[i].charge * e;  // 4 bytes used out of each particle's 32-byte sector
}
#endif

int main() {
#ifdef FIXED
  float* charge = dev_random(N, 71);  // SoA: the charge field alone (the other seven arrays are not touched)
#else
  Particle* p = nullptr;
  CHECK(cudaMalloc(&p, N * sizeof(Particle)));
  fill_hash<<<1024, 256>>>(reinterpret_cast<float*>(p), N * 8, 71);
  CHECK_LAUNCH();
#endif
  float* fx = nullptr;
  CHECK(cudaMalloc(&fx, N * sizeof(float)));
  const int blocks = sm_count() * 8, threads = 256;
  run_steps("aos_field", [&] {
#ifdef FIXED
    field_force<<<blocks, threads>>>(charge, fx, N, 2.5f);
#else
    field_force<<<blocks, threads>>>(p, fx, N, 2.5f);
#endif
    CHECK_LAUNCH();
  }, 10);
  float f0 = 0;
  CHECK(cudaMemcpy(&f0, fx, sizeof(float), cudaMemcpyDeviceToHost));
  printf("fx[0] = %f\n", f0);
  return 0;
}
