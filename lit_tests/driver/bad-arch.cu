// RUN: not %smpart %s -o %t.cu -- %stubflags -arch=sm_999 2>&1 | FileCheck %s
// RUN: not %smpart %s -o %t.cu -- %stubflags --cuda-gpu-arch=sm_1000 2>&1 | FileCheck --check-prefix=CLANG %s
// RUN: not test -e %t.cu
// RUN: %smpart %s -o %t.list.cu -- %stubflags --offload-arch=sm_80,sm_90
// RUN: %smpart %s -o %t.native.cu -- %stubflags --offload-arch=native
// An architecture clang does not know is one error naming it, before any
// parse (the driver would otherwise parse the file as plain C++ and print
// a hundred errors after the one that matters). A list parses for its
// first architecture, `native` (which needs a GPU) for the default one.
#include "cuda.h"
__global__ void k(int *p) { p[0] = 1; }

// CHECK: {{^}}smpart-transform: error: '{{.*}}bad-arch.cu': unsupported GPU architecture 'sm_999' (clang 22 knows sm_50 to sm_121a)
// CHECK-NOT: error
// CLANG: {{^}}smpart-transform: error: '{{.*}}bad-arch.cu': unsupported GPU architecture 'sm_1000'
