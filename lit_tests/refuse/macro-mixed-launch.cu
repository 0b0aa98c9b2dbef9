// RUN: %smpart %s -o %t.cu --exclude-kernels=excluded -- %stubflags 2>&1 | FileCheck --check-prefix=WARN %s
// RUN: cmp %s %t.cu
// One macro body launches a kernel that is transformed and one that is
// not: the body has one spelling for both, so the other kernel is refused.
#include "cuda.h"

#define LAUNCH(k, ...) k<<<1, 32>>>(__VA_ARGS__)

__global__ void included(int *p) { p[0] = 1; }
__global__ void excluded(int *p) { p[0] = 2; }

void run(int *p) {
  LAUNCH(included, p);
  LAUNCH(excluded, p);
}
// WARN: {{^}}{{.*}}macro-mixed-launch.cu:[[@LINE-7]]:17: warning: smpart: kernel 'included' not transformed: launched through a macro that also launches kernel 'excluded', which is not transformed
