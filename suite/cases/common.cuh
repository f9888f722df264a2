// Shared helpers for the capture-suite CUDA programs: error checks, a
// deterministic non-zero fill, step timing with CUDA events, NVTX step ranges.
#pragma once
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#define CHECK(x)                                                                \
  do {                                                                          \
    cudaError_t e_ = (x);                                                       \
    if (e_ != cudaSuccess) {                                                    \
      fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x,                 \
              cudaGetErrorString(e_));                                          \
      exit(1);                                                                  \
    }                                                                           \
  } while (0)
#define CHECK_LAUNCH() CHECK(cudaGetLastError())

static inline int env_int(const char* name, int dflt) {
  const char* v = getenv(name);
  return v ? atoi(v) : dflt;
}

// Pseudo-random values in [-1, 1): never zeros, so nothing runs on a fast path.
__global__ void fill_hash(float* p, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    unsigned h = (unsigned)i * 2654435761u ^ seed;
    h ^= h >> 13; h *= 0x5bd1e995u; h ^= h >> 15;
    p[i] = (h & 0xffffff) / 8388608.0f - 1.0f;
  }
}
__global__ void fill_hash_int(int* p, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    unsigned h = (unsigned)i * 2654435761u ^ seed;
    h ^= h >> 13; h *= 0x5bd1e995u; h ^= h >> 15;
    p[i] = (int)(h & 0x7fffffff);
  }
}

static inline float* dev_random(size_t n, unsigned seed) {
  float* p = nullptr;
  CHECK(cudaMalloc(&p, n * sizeof(float)));
  fill_hash<<<1024, 256>>>(p, n, seed);
  CHECK_LAUNCH();
  return p;
}

static inline int sm_count() {
  int dev = 0, n = 0;
  CHECK(cudaGetDevice(&dev));
  CHECK(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev));
  return n;
}

// Runs `step` WARMUP times, then STEPS times inside NVTX "step" ranges, timing
// each with events, and prints the median step time (the program's own clock).
template <class F>
static void run_steps(const char* name, F step, int default_steps, int warmup = 3) {
  int steps = env_int("STEPS", default_steps);
  for (int i = 0; i < warmup; ++i) step();
  CHECK(cudaDeviceSynchronize());
  std::vector<float> ms;
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  for (int i = 0; i < steps; ++i) {
    nvtxRangePushA("step");
    CHECK(cudaEventRecord(a));
    step();
    CHECK(cudaEventRecord(b));
    nvtxRangePop();
    CHECK(cudaEventSynchronize(b));
    float t = 0;
    CHECK(cudaEventElapsedTime(&t, a, b));
    ms.push_back(t);
  }
  CHECK_LAUNCH();
  CHECK(cudaDeviceSynchronize());
  std::sort(ms.begin(), ms.end());
  printf("%s: %d steps, median step %.4f ms\n", name, steps, ms.empty() ? 0.0 : ms[ms.size() / 2]);
}
