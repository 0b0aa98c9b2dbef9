// RUN: %smpart %s -o %t.cu -- %stubflags 2>&1 | FileCheck --check-prefix=WARN %s
// RUN: FileCheck %s < %t.cu
// A kernel launched only in a branch this configuration skips would keep
// its <<<>>> there while its definition changes: the other configuration
// of the file would no longer compile. Such a kernel is refused, with a
// note at the skipped launch. Launches skipped by only one side of the
// parse (host code under #ifndef __CUDA_ARCH__) are rewritten as usual.
#include "cuda.h"

__global__ void fast_path(int *p) { p[threadIdx.x] = 1; }
__global__ void slow_path(int *p) { p[threadIdx.x] = 2; }

void run(int *p) {
#if defined(USE_FAST_PATH)
  fast_path<<<1, 32>>>(p);
#else
  slow_path<<<1, 32>>>(p);
#endif
#ifndef __CUDA_ARCH__
  slow_path<<<1, 64>>>(p);
#endif
}
// WARN: {{^}}{{.*}}inactive-branch-launch.cu:[[@LINE-13]]:17: warning: smpart: kernel 'fast_path' not transformed: launched in code the preprocessor skipped (line [[@LINE-8]]): that configuration would still launch it with <<<>>>
// WARN-NEXT: {{^}}{{.*}}inactive-branch-launch.cu:[[@LINE-9]]:3: note: launch in an inactive preprocessor branch
// WARN-NOT: slow_path
// CHECK: {{^}}__global__ void fast_path(int *p) { p[threadIdx.x] = 1; }
// CHECK: {{^}}__global__ void slow_path(smpart::LaunchControl smpart_ctl, int *p) {
