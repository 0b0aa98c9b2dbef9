// RUN: %smpart %s -- %stubflags | FileCheck %s
// A `return` inside a lambda returns from the lambda, not from the kernel:
// it is left alone and needs no label.
#include "cuda.h"

__global__ void pick(int *p) {
  auto sign = [](int v) {
    if (v < 0)
      return -1;
    return 1;
  };
  p[threadIdx.x] = sign(p[threadIdx.x]);
}

// CHECK: {{^}}      return -1;
// CHECK-NEXT: {{^}}    return 1;
// CHECK-NOT: {{^[^/]*}}smpart_next_block
// CHECK: {{^}}    }{{$}}
// CHECK-NEXT: {{^}}  }{{$}}
