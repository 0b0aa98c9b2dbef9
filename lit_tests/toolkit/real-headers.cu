// REQUIRES: cuda-toolkit
// RUN: %smpart --keep-original=headers %s --cuda-path=%cuda_path -- 2>%t.err | FileCheck %s
// RUN: FileCheck --check-prefix=WARN %s < %t.err
// With the real CUDA 13 headers (no stub), kernels, launches and
// cooperative-groups refusals are recognised the same way.
#include <cooperative_groups.h>
#include <cuda_runtime.h>

__global__ void saxpy(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  y[i] = a * x[i] + y[i];
}

__global__ void synced(int *p) { cooperative_groups::this_grid().sync(); }

void run(int n, float *x, float *y, cudaStream_t s) {
  saxpy<<<(n + 255) / 256, 256, 0, s>>>(n, 2.0f, x, y);
  synced<<<1, 1>>>(nullptr);
}

// CHECK: {{^}}__global__ void saxpy(smpart::LaunchControl smpart_ctl, int n, float a, const float *x, float *y) {
// CHECK: {{^}}    const uint3 blockIdx = smpart_cta.blockIdx();
// CHECK: {{^}}  if (i >= n) goto smpart_next_block;
// CHECK-NEXT: {{^}}  y[i] = a * smpart::load(&x[i], true) + smpart::load(&y[i], true);
// CHECK: {{^}}__global__ void synced(int *p) { cooperative_groups::this_grid().sync(); }
// CHECK: {{^}}  smpart::launchRewritten({"saxpy", reinterpret_cast<const void *>(&saxpy)}, (n + 255) / 256, 256, 0, s,
// CHECK-NEXT: {{^}}  synced<<<1, 1>>>(nullptr);

// WARN: {{^}}{{.*}}real-headers.cu:[[@LINE-15]]:34: warning: smpart: kernel 'synced' not transformed: grid-wide synchronisation (grid_group::sync)
