// REQUIRES: cuda-toolkit
// RUN: %smpart %s -o %t.cu 2>&1 | FileCheck --allow-empty --check-prefix=QUIET %s
// RUN: FileCheck %s < %t.cu
// RUN: mkdir -p %t.empty && not %smpart %s -o %t.none.cu --runtime-include=%t.empty 2>&1 | FileCheck --check-prefix=NONE %s
// nvcc's crt/math_functions.hpp gives host code max/min overloads for
// mixed signed/unsigned arguments; clang's wrapper has them on the device
// side only. The pre-included compatibility header (smpart/detail/nvcc_compat.h,
// found through --runtime-include) adds the host ones.
__global__ void k(int *p) { p[blockIdx.x] = 1; }
int pick(unsigned a, int b, long c, unsigned long d) {
  return max(a, b) + min(b, a) + (int)max(c, d) + (int)min(1.0f, 2.0);
}
// QUIET-NOT: error
// CHECK: smpart_cta.blockIdx()
// NONE: error: no matching function for call to 'max'
