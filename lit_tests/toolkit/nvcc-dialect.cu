// REQUIRES: nvcc, cuda-toolkit
// RUN: rm -rf %t && mkdir -p %t
// RUN: %smpart %s -o %t/out.cu --cuda-path=%cuda_path -- 2>&1 | FileCheck --check-prefix=WARN %s
// RUN: FileCheck %s < %t/out.cu
// RUN: %nvcc -arch=sm_90 -c -I %runtime_include %t/out.cu -o %t/out.o
// What nvcc accepts and clang-22 does not, parsed anyway: launches spelled
// `<< < ... >> >`, single-% PTX special registers in inline asm, and host
// code using time()/srand() that nvcc's headers declare. The output keeps
// the user's spelling except where it rewrites.
#include <cuda_runtime.h>

__global__ void stamp(unsigned long long *t, int n) {
  unsigned long long v;
  asm volatile("mov.u64 %0, %globaltimer;" : "=l"(v));
  if (threadIdx.x < n)
    t[threadIdx.x] = v;
}
// CHECK: asm volatile("mov.u64 %0, %globaltimer;" : "=l"(v));

__global__ void raw_block(unsigned *p) {
  unsigned c;
  asm("mov.u32 %0, %ctaid.x;" : "=r"(c));
  p[threadIdx.x] = c;
}
// WARN: warning: smpart: kernel 'raw_block' not transformed: inline asm reads %ctaid/%nctaid

void run(unsigned long long *t, int n) {
  srand(time(0));
  stamp << <1, 32 >> >(t, n);
}
// CHECK: smpart::launchRewritten({"stamp", reinterpret_cast<const void *>(&stamp)}, 1, 32 , 0, 0, [smpart_args = std::make_tuple(t, n)]
