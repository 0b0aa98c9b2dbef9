// RUN: %smpart %s -o %t.cu -- %stubflags 2>&1 | count 0
// RUN: FileCheck %s < %t.cu
// nvcc accepts blanks inside the launch chevrons (`<< <`, `>> >`, as in
// some Rodinia sources); clang's lexer does not. The parse sees them
// joined; the launch is rewritten and nested template closers elsewhere
// are left alone.
#include "cuda.h"
template <class T> struct Box { T v; };
__global__ void k(int *p) { p[blockIdx.x] = 1; }
Box<Box<Box<int>> > nested;
void run(int *p) {
  k<< <2, 32 >> >(p);
  k<<  <4,	64>>  >(p);
}
// CHECK: Box<Box<Box<int>> > nested;
// CHECK: smpart::launchRewritten({"k", {{.*}}}, 2, 32 , 0, 0,
// CHECK: smpart::launchRewritten({"k", {{.*}}}, 4,	64, 0, 0,
