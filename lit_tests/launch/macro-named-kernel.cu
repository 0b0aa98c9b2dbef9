// RUN: %smpart --keep-original=headers %s -- %stubflags | FileCheck %s
// A launch whose kernel is named through an object-like macro is rewritten
// where the launch is written; the macro's body, shared by every use of
// the macro (the kernel's own name among them), is left as it is.
#include "cuda.h"

#define NAME k
#define KF t<float>

__global__ void NAME(int *x) {}
template <typename T> __global__ void t(T *x) {}

void run(int *x, float *f) {
  k<<<1, 1>>>(x);
  NAME<<<1, 1>>>(x);
  KF<<<1, 1>>>(f);
}

// CHECK: {{^}}#define NAME k{{$}}
// CHECK: {{^}}#define KF t<float>{{$}}
// CHECK: {{^}}  smpart::launchRewritten({"k", reinterpret_cast<const void *>(&k)}, 1, 1, 0, 0,
// CHECK: {{^}}  smpart::launchRewritten({"k", reinterpret_cast<const void *>(&NAME)}, 1, 1, 0, 0, {{.*}} NAME<<<smpart_p.grid, smpart_p.block, smpart_p.smem, smpart_p.stream>>>(smpart_p.ctl, smpart_a...); }, smpart_args); });
// CHECK: {{^}}  smpart::launchRewritten({"t", reinterpret_cast<const void *>({{.*}}&KF{{.*}})}, 1, 1, 0, 0, {{.*}} KF<<<smpart_p.grid, smpart_p.block, smpart_p.smem, smpart_p.stream>>>(smpart_p.ctl, smpart_a...); }, smpart_args); });
