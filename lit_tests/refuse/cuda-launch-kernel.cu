// RUN: %smpart %s -o %t.cu -- %stubflags 2>&1 | FileCheck --check-prefix=WARN %s
// RUN: cmp %s %t.cu
// cudaLaunchKernel passes the kernel's original argument list, which the
// transformation would change: the launched kernel is refused, and its
// `<<<>>>` launch elsewhere stays as written.
#include "cuda.h"

__global__ void viaApi(int *p) { p[0] = 1; }

void run(int *p) {
  void *args[] = {&p};
  cudaLaunchKernel((void *)viaApi, dim3(1), dim3(1), args, 0, 0);
  viaApi<<<1, 1>>>(p);
}
// WARN: {{^}}{{.*}}cuda-launch-kernel.cu:[[@LINE-3]]:3: warning: smpart: kernel 'viaApi' not transformed: launched through cudaLaunchKernel, whose argument list smpart cannot rewrite
