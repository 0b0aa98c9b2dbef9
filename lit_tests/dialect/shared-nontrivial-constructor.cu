// REQUIRES: cuda-toolkit
// RUN: %smpart %s -o %t.cu 2>&1 | FileCheck --check-prefix=DIAG %s
// RUN: FileCheck %s < %t.cu
// nvcc accepts a __shared__ variable whose type has a non-trivial
// constructor (cuda::barrier) and runs no constructor; clang refuses it.
// The tool says so, names the nvcc feature, and rewrites the file.
#include <cuda/barrier>
__global__ void k(int *p) {
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  if (threadIdx.x == 0)
    init(&bar, blockDim.x);
  __syncthreads();
  bar.arrive_and_wait();
  p[blockIdx.x] = 1;
}
// DIAG: warning: initialization is not supported for __shared__ variables
// DIAG: note: nvcc accepts this (a __shared__ variable of a type with a non-trivial constructor
// DIAG-NOT: error
// CHECK: smpart_cta.blockIdx()
// CHECK: __shared__ cuda::barrier<cuda::thread_scope_block> bar;
