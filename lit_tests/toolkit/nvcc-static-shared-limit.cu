// REQUIRES: nvcc, cuda-toolkit
// RUN: rm -rf %t && mkdir -p %t
// RUN: %smpart %s -o %t/out.cu --cuda-path=%cuda_path --
// RUN: FileCheck %s < %t/out.cu
// RUN: %nvcc -arch=sm_90 -c --resource-usage -I %runtime_include %t/out.cu -o %t/out.o 2>&1 | FileCheck %s --check-prefix=USAGE
// A kernel at the 48 KB static shared-memory limit still compiles once
// rewritten: the protocol adds no static shared memory (its state lives at
// the end of the dynamic shared memory the runtime adds to each launch), and
// the kernel's own static footprint is unchanged.
#include <cuda_runtime.h>

__global__ void full_tile(const float *in, float *out) {
  __shared__ float tile[12288]; // 48 KB
  for (int i = threadIdx.x; i < 12288; i += blockDim.x)
    tile[i] = in[blockIdx.x * 12288 + i];
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = tile[threadIdx.x * 7 % 12288];
}

// CHECK: __global__ void full_tile(smpart::LaunchControl smpart_ctl,
// CHECK: for (smpart::detail::Cta smpart_cta(smpart_ctl); smpart_cta.next();) {
// USAGE: Compiling entry function '_Z9full_tileN6smpart13LaunchControlEPKfPf'
// USAGE: 49152 bytes smem
