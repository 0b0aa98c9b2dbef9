// RUN: %smpart %s -o %t.cu -- %stubflags 2>&1 | FileCheck --check-prefix=WARN %s
// RUN: FileCheck %s < %t.cu
// cudaLaunchKernel passes the kernel's original argument list. A kernel
// that is also launched with <<<>>> is transformed and the API's use names
// the original, kept beside it, with a warning; one that only the API
// launches is refused (its rewrite would run nowhere).
#include "cuda.h"

__global__ void viaApi(int *p) { p[0] = 1; }
__global__ void onlyApi(int *p) { p[0] = 2; }

void run(int *p) {
  void *args[] = {&p};
  cudaLaunchKernel((void *)viaApi, dim3(1), dim3(1), args, 0, 0);
  viaApi<<<1, 1>>>(p);
  cudaLaunchKernel((void *)onlyApi, dim3(1), dim3(1), args, 0, 0);
}
// WARN-DAG: {{^}}{{.*}}cuda-launch-kernel.cu:[[@LINE-4]]:28: warning: smpart: kernel 'viaApi' keeps its original definition beside the rewritten one for the use of its address at line [[@LINE-4]] (a graph node, a launch API, a function pointer or table): what launches it there runs the original, unchanged and outside smpart's plan
// WARN-DAG: {{^}}{{.*}}cuda-launch-kernel.cu:[[@LINE-3]]:3: warning: smpart: kernel 'onlyApi' not transformed: launched through cudaLaunchKernel, whose argument list smpart cannot rewrite
// CHECK: {{^}}__global__ void viaApi(int *p) { p[0] = 1; }
// CHECK: {{^}}__global__ void viaApi(smpart::LaunchControl smpart_ctl, int *p) {
// CHECK: {{^}}__global__ void onlyApi(int *p) { p[0] = 2; }
// CHECK: cudaLaunchKernel((void *)smpart::original(viaApi, viaApi), dim3(1), dim3(1), args, 0, 0);
// CHECK-NEXT: smpart::launchRewritten({"viaApi"
// CHECK-NEXT: cudaLaunchKernel((void *)onlyApi, dim3(1), dim3(1), args, 0, 0);
