// RUN: %smpart %s -- %stubflags | FileCheck %s
// Without an early return there is nothing to jump to: no label is emitted
// (an unused label would warn under -Wall).
#include "cuda.h"

__global__ void store(int *p) {
  p[threadIdx.x] = 7;
}

// CHECK: {{^}}  p[threadIdx.x] = 7;
// CHECK: {{^}}    }{{$}}
// CHECK-NEXT: {{^}}  }{{$}}
