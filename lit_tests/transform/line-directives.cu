// RUN: %smpart %s -- %stubflags | FileCheck %s
// The output starts with the marker line and maps every line back to the
// original: `#line 1` after the inserted includes, and one `#line` after the
// prologue and after the epilogue, naming the lines of `{` and `}`.
#include "cuda.h"

__global__ void scale(float a, float *y)
{
  y[threadIdx.x] *= a;
}

// CHECK: {{^}}// smpart-transform: rewritten from {{.*}}line-directives.cu; edit that file instead
// CHECK-NEXT: {{^}}#include "smpart/device.cuh"
// CHECK-NEXT: {{^}}#include "smpart/launch.hpp"
// CHECK-NEXT: {{^}}#line 1 "{{.*}}line-directives.cu"
// CHECK-NEXT: {{^}}// RUN: %smpart %s
// CHECK: {{^}}    {
// CHECK-NEXT: {{^}}#line [[@LINE-10]] "{{.*}}line-directives.cu"
// CHECK-EMPTY:
// CHECK-NEXT: {{^}}  y[threadIdx.x] *= a;
// CHECK: {{^}}    }{{$}}
// CHECK-NEXT: {{^}}  }{{$}}
// CHECK-NEXT: {{^}}#line [[@LINE-13]] "{{.*}}line-directives.cu"
// CHECK-NEXT: {{^}}}

// A #line in the input (generated code) renumbers what follows it: the
// directives the rewrite adds continue its numbering and name its file, so
// that diagnostics still point into the generator's input.
#line 500 "generated.cu"
__global__ void shift(float *y)
{
  y[threadIdx.x] += 1;
}
// CHECK: {{^}}#line 500 "generated.cu"
// CHECK: {{^}}__global__ void shift(smpart::LaunchControl smpart_ctl, float *y)
// CHECK: {{^}}    {
// CHECK-NEXT: {{^}}#line 501 "generated.cu"
// CHECK-EMPTY:
// CHECK-NEXT: {{^}}  y[threadIdx.x] += 1;
// CHECK: {{^}}    }{{$}}
// CHECK-NEXT: {{^}}  }{{$}}
// CHECK-NEXT: {{^}}#line 503 "generated.cu"
// CHECK-NEXT: {{^}}}
