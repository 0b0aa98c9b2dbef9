// The bundled two-kernel example: a memory-bound kernel (triad, streams
// three arrays through DRAM, `passes` times per launch) and a compute-bound
// one (fma_chain, long dependent FMA chains per thread), each launched
// repeatedly on its own stream. Each launch has many logical blocks and
// runs for tens of milliseconds on an H100, long enough to be resized
// (and profiled) while it runs. Plain CUDA: the build rewrites it with
// smpart-transform and links libsmpart, so the SMPART_* variables work with no
// code change:
//
//   SMPART_PROFILE=profiles.json two_kernels   # measure profiles
//   SMPART_POLICY=cd-search SMPART_PROFILES=profiles.json
//     SMPART_TRACE=trace.json two_kernels       # co-run under a policy
//     (one command line)
//   two_kernels --only memory   /   two_kernels --only compute
//                                  # one kernel per process (under smpartd)
//
// Prints each stream's time; checks the results; exit 1 on a wrong result
// or a CUDA error, 77 when there is no GPU.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

__global__ void triad(const float *a, const float *b, float *c, float s,
                      int n) {
  // Block b covers elements of tile b % tiles: the grid is `passes` times
  // the array.
  const int tiles = (n + blockDim.x - 1) / blockDim.x;
  int i = (blockIdx.x % tiles) * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  c[i] = a[i] + s * b[i];
}

__global__ void fma_chain(float *out, int chain, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  float x = 1.0f + 1e-6f * (i % 1024), y = 0.999f;
  for (int k = 0; k < chain; ++k) {
    x = fmaf(x, y, 1e-4f);
    y = fmaf(y, 0.9999f, 1e-5f);
  }
  out[i] = x + y;
}

static bool check(cudaError_t e, const char *what) {
  if (e != cudaSuccess)
    std::fprintf(stderr, "two_kernels: %s: %s\n", what, cudaGetErrorString(e));
  return e == cudaSuccess;
}

int main(int argc, char **argv) {
  bool memory = true, compute = true;
  int iterations = 10;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--only") && i + 1 < argc) {
      ++i;
      memory = !std::strcmp(argv[i], "memory");
      compute = !std::strcmp(argv[i], "compute");
      if (!memory && !compute) {
        std::fprintf(stderr, "two_kernels: --only memory|compute\n");
        return 2;
      }
    } else if (!std::strcmp(argv[i], "--iterations") && i + 1 < argc) {
      iterations = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: two_kernels [--only memory|compute] "
                           "[--iterations N]\n");
      return 2;
    }
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("two_kernels: no GPU (%s)\n",
                cudaGetErrorString(cudaGetLastError()));
    return 77;
  }

  const int n = 1 << 25, chain = 131072, threads = 256, passes = 256;
  const int blocks = (n + threads - 1) / threads;
  float *a = nullptr, *b = nullptr, *c = nullptr, *out = nullptr;
  if (!check(cudaMalloc(&a, n * sizeof(float)), "cudaMalloc") ||
      !check(cudaMalloc(&b, n * sizeof(float)), "cudaMalloc") ||
      !check(cudaMalloc(&c, n * sizeof(float)), "cudaMalloc") ||
      !check(cudaMalloc(&out, n * sizeof(float)), "cudaMalloc"))
    return 1;
  std::vector<float> ones(n, 1.0f), twos(n, 2.0f);
  cudaMemcpy(a, ones.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(b, twos.data(), n * sizeof(float), cudaMemcpyHostToDevice);

  cudaStream_t sm, sc;
  cudaEvent_t start, endM, endC;
  cudaStreamCreateWithFlags(&sm, cudaStreamNonBlocking);
  cudaStreamCreateWithFlags(&sc, cudaStreamNonBlocking);
  cudaEventCreate(&start);
  cudaEventCreate(&endM);
  cudaEventCreate(&endC);
  cudaEventRecord(start, sm);
  cudaStreamWaitEvent(sc, start, 0);
  for (int it = 0; it < iterations; ++it) {
    if (memory)
      triad<<<blocks * passes, threads, 0, sm>>>(a, b, c, 3.0f, n);
    if (compute)
      fma_chain<<<blocks / 8, threads, 0, sc>>>(out, chain, n / 8);
  }
  cudaEventRecord(endM, sm);
  cudaEventRecord(endC, sc);
  if (!check(cudaEventSynchronize(endM), "triad") ||
      !check(cudaEventSynchronize(endC), "fma_chain"))
    return 1;
  float msM = 0, msC = 0;
  cudaEventElapsedTime(&msM, start, endM);
  cudaEventElapsedTime(&msC, start, endC);

  bool good = true;
  if (memory) {
    std::vector<float> h(n);
    cudaMemcpy(h.data(), c, n * sizeof(float), cudaMemcpyDeviceToHost);
    for (int i = 0; i < n && good; i += 4099)
      good = h[i] == 7.0f;
    std::printf("triad:     %d launches, %.2f ms\n", iterations, msM);
  }
  if (compute) {
    std::vector<float> h(n / 8);
    cudaMemcpy(h.data(), out, h.size() * sizeof(float), cudaMemcpyDeviceToHost);
    for (std::size_t i = 0; i < h.size() && good; i += 4099)
      good = std::isfinite(h[i]) && h[i] > 0;
    std::printf("fma_chain: %d launches, %.2f ms\n", iterations, msC);
  }
  if (!good)
    std::fprintf(stderr, "two_kernels: wrong result\n");
  return good ? 0 : 1;
}
