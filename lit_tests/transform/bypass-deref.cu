// RUN: %smpart %s -- %stubflags | FileCheck %s
// `*p` and `*(p + k)` through a parameter are loads too.
#include "cuda.h"

__global__ void first(const int *x, int *y) {
  int a = *x;
  int b = *(x + 2);
  y[0] = a + b;
}

// CHECK: {{^}}  int a = smpart::load(&*x, true);
// CHECK-NEXT: {{^}}  int b = smpart::load(&*(x + 2), true);
