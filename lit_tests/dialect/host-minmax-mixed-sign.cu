// REQUIRES: cuda-toolkit
// RUN: %smpart %s -o %t.cu 2>&1 | FileCheck --allow-empty --check-prefix=QUIET %s
// RUN: FileCheck %s < %t.cu
// An installed tool reads the header beside it (<prefix>/share/smpart-transform/
// include), not the source tree's: an empty one there shows what it fixes.
// RUN: rm -rf %t.prefix && mkdir -p %t.prefix/bin %t.prefix/share/smpart-transform/include
// RUN: cp %smpart_binary %t.prefix/bin/smpart-transform
// RUN: touch %t.prefix/share/smpart-transform/include/nvcc_compat.h
// RUN: not %t.prefix/bin/smpart-transform %s -o %t.none.cu 2>&1 | FileCheck --check-prefix=NONE %s
// RUN: cp %nvcc_compat %t.prefix/share/smpart-transform/include/nvcc_compat.h
// RUN: %t.prefix/bin/smpart-transform %s -o %t.installed.cu
// RUN: FileCheck %s < %t.installed.cu
// nvcc's crt/math_functions.hpp gives host code max/min overloads for
// mixed signed/unsigned arguments; clang's wrapper has them on the device
// side only. The pre-included compatibility header (passes/nvcc/include/
// nvcc_compat.h) adds the host ones.
__global__ void k(int *p) { p[blockIdx.x] = 1; }
int pick(unsigned a, int b, long c, unsigned long d) {
  return max(a, b) + min(b, a) + (int)max(c, d) + (int)min(1.0f, 2.0);
}
// QUIET-NOT: error
// CHECK: smpart_cta.blockIdx()
// NONE: error: no matching function for call to 'max'
