// REQUIRES: cuda-toolkit
// RUN: %smpart %s -o %t.cu -- -I %S/Inputs/project-cuda-h 2>&1 | FileCheck --allow-empty --check-prefix=QUIET %s
// RUN: FileCheck %s < %t.cu
// A project's own cuda.h on the include path: nvcc never includes cuda.h
// itself, so the program gets the project's file. clang's CUDA wrapper
// includes "cuda.h" for CUDA_VERSION and found the project's file instead
// of the toolkit's; the tool gives the wrapper the toolkit's.
#include "cuda.h"
__global__ void k(int *p) { p[blockIdx.x] = PROJECT_CUDA_H; }
// QUIET-NOT: error
// CHECK: smpart_cta.blockIdx()
