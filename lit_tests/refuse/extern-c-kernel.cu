// RUN: %smpart %s -o %t.cu -- %stubflags 2>&1 | FileCheck --check-prefix=WARN %s
// RUN: FileCheck %s < %t.cu
// An extern "C" kernel keeps one symbol whatever its parameters: another
// file that declares it itself (`extern "C" __global__ void saxpy_c(...)`)
// or a driver-API load by name would launch the rewritten kernel with the
// original arguments, and nothing would fail to link. It is refused.
#include "cuda.h"

extern "C" __global__ void saxpy_c(int n, float *y) {
  if (threadIdx.x < n)
    y[threadIdx.x] *= 2;
}
// WARN: {{^}}{{.*}}extern-c-kernel.cu:[[@LINE-4]]:28: warning: smpart: kernel 'saxpy_c' not transformed: extern "C" kernel: its symbol does not encode the parameter list

__global__ void saxpy_cxx(int n, float *y) {
  if (threadIdx.x < n)
    y[threadIdx.x] *= 2;
}
// WARN-NOT: saxpy_cxx

void run(float *y) {
  saxpy_c<<<1, 32>>>(32, y);
  saxpy_cxx<<<1, 32>>>(32, y);
}
// CHECK: {{^}}extern "C" __global__ void saxpy_c(int n, float *y) {
// CHECK: {{^}}__global__ void saxpy_cxx(smpart::LaunchControl smpart_ctl, int n, float *y) {
// It still runs on the SMs of its partition, unchanged.
// CHECK: {{^}}  saxpy_c<<<1, 32, 0, smpart::confined("saxpy_c", 0)>>>(32, y);
