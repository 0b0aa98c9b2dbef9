// REQUIRES: cuda-toolkit, host-gcc-omp
// RUN: %smpart %s -o %t.cu 2>&1 | FileCheck --allow-empty --check-prefix=QUIET %s
// RUN: FileCheck %s < %t.cu
// RUN: not %smpart %s -o %t.none.cu --host-compiler-include=none 2>&1 | FileCheck --check-prefix=NONE %s
// nvcc compiles host code with gcc, which finds its own headers (omp.h);
// clang's resource folder has none. The tool searches gcc's folder last.
#include <omp.h>
__global__ void k(int *p) { p[blockIdx.x] = 1; }
int threads() { return omp_get_max_threads(); }
// QUIET-NOT: error
// CHECK: smpart_cta.blockIdx()
// NONE: 'omp.h' file not found
