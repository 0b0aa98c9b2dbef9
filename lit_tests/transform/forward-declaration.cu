// RUN: %smpart %s -- %stubflags | FileCheck %s
// RUN: %smpart --keep-original=headers %s -- %stubflags | FileCheck --check-prefix=HEADERS %s
// Every declaration of a kernel gets the control parameter, so that the
// forward declaration and the definition still declare one function. The
// original kept beside it (--keep-original=all, the default) has its
// declarations copied too: a launch between a declaration and the
// definition can still name the original.
#include "cuda.h"

__global__ void fill(int *p, int v);
__global__ void fill(int *p, int v);
void early(int *p) { fill<<<1, 32>>>(p, 7); }

__global__ void fill(int *p, int v) { p[threadIdx.x] = v; }

// CHECK: // smpart: the original kernel, for translation units that launch it directly
// CHECK-NEXT: #line [[@LINE-7]] "{{.*}}forward-declaration.cu"
// CHECK-NEXT: {{^}}__global__ void fill(int *p, int v);
// CHECK-NEXT: #line [[@LINE-9]] "{{.*}}forward-declaration.cu"
// CHECK-NEXT: {{^}}__global__ void fill(smpart::LaunchControl smpart_ctl, int *p, int v);
// CHECK: {{^}}__global__ void fill(int *p, int v);
// CHECK: {{^}}__global__ void fill(smpart::LaunchControl smpart_ctl, int *p, int v);
// CHECK-NEXT: void early(int *p) { smpart::launchRewritten({"fill", {{.*}}, true},
// CHECK-SAME: if (smpart_p.original) fill<<<smpart_p.grid, smpart_p.block, smpart_p.smem, smpart_p.stream>>>(smpart_a...); else fill<<<smpart_p.grid, smpart_p.block, smpart_p.smem, smpart_p.stream>>>(smpart_p.ctl, smpart_a...);
// CHECK: #line [[@LINE-11]] "{{.*}}forward-declaration.cu"
// CHECK-NEXT: {{^}}__global__ void fill(int *p, int v) { p[threadIdx.x] = v; }
// CHECK-NEXT: #line [[@LINE-13]] "{{.*}}forward-declaration.cu"
// CHECK-NEXT: {{^}}__global__ void fill(smpart::LaunchControl smpart_ctl, int *p, int v) {

// HEADERS: {{^}}__global__ void fill(smpart::LaunchControl smpart_ctl, int *p, int v);
// HEADERS-NEXT: {{^}}__global__ void fill(smpart::LaunchControl smpart_ctl, int *p, int v);
// HEADERS-NEXT: void early(int *p) { smpart::launchRewritten({"fill", reinterpret_cast<const void *>(&fill)}, 1, 32, 0, 0,
// HEADERS-SAME: { fill<<<smpart_p.grid, smpart_p.block, smpart_p.smem, smpart_p.stream>>>(smpart_p.ctl, smpart_a...); }
// HEADERS: {{^}}__global__ void fill(smpart::LaunchControl smpart_ctl, int *p, int v) {
// HEADERS-NOT: {{^}}__global__ void fill(int *p, int v)
