// RUN: %smpart %s -o %t.cu -- %stubflags -arch=sm_80 --expt-relaxed-constexpr -Xcompiler -Wall,-DHOST_FLAG 2>&1 | count 0
// RUN: FileCheck %s < %t.cu
// nvcc spellings after `--` are translated: -arch=sm_80 becomes the device
// parse's arch, --expt-* is dropped, -Xcompiler's list is passed on.
#include "cuda.h"
#ifndef HOST_FLAG
#error "-Xcompiler flags were not passed on"
#endif
__global__ void k(unsigned *p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 800
  p[0] = gridDim.x;
#endif
}
// CHECK: {{^}}    const dim3 gridDim = smpart_cta.gridDim();
