// RUN: %smpart %s -o %t.cu -- %stubflags 2>%t.err
// RUN: FileCheck %s < %t.cu
// RUN: FileCheck --check-prefix=WARN %s < %t.err
// All of a kernel's launches run on its partition, or none: a refused
// kernel whose launch by name cannot be edited (a macro body serving
// several kernels) runs on every SM, so a launch through a pointer that
// may hold it does too.
#include "cuda.h"

extern "C" __global__ void first(float *p) { p[0] = 1; }
extern "C" __global__ void second(float *p) { p[0] = 2; }
#define LAUNCH(k) k<<<1, 32>>>(p)
typedef void (*kfn)(float *);

void run(float *p) {
  LAUNCH(first);
  LAUNCH(second);
  kfn table[] = {first};
  table[0]<<<1, 32>>>(p);
  // CHECK: {{^}}  table[0]<<<1, 32>>>(p);
  // WARN: pointer-launches-all-or-none.cu:[[@LINE-2]]:3: warning: smpart: the launch through the kernel pointer 'table[0]' runs on every SM, outside smpart's plan: the pointer may hold kernel 'first', which runs on every SM: its launch at line {{[0-9]+}} cannot be edited
}
