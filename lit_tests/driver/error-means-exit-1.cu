// RUN: not %smpart %s -o %t.cu -- %stubflags -fno-such-flag 2>&1 | FileCheck %s
// RUN: not test -e %t.cu
// An error line from the driver (an unknown argument) fails the file, even
// when the parse itself could go on.
#include "cuda.h"
__global__ void k(int *p) { p[0] = 1; }
// CHECK: error: unknown argument: '-fno-such-flag'
// CHECK: smpart-transform: error: '{{.*}}error-means-exit-1.cu' does not compile; nothing was written
