// RUN: %smpart %s -o %t.cu -- %stubflags 2>&1 | FileCheck --check-prefix=WARN %s
// RUN: FileCheck %s < %t.cu
// cudaGetFuncBySymbol is not a query: the handle it returns is launched
// through cuLaunchKernel with the original argument list. The kernel is
// refused like any other escaping address.
#include "cuda.h"

typedef struct CUfunc_st *cudaFunction_t;
extern "C" cudaError_t cudaGetFuncBySymbol(cudaFunction_t *f,
                                           const void *symbol);

__global__ void by_symbol(int *p) { p[threadIdx.x] = 1; }

void run(int *p) {
  cudaFunction_t f;
  cudaGetFuncBySymbol(&f, (const void *)by_symbol);
  by_symbol<<<1, 32>>>(p);
}
// WARN: {{^}}{{.*}}get-func-by-symbol.cu:[[@LINE-7]]:17: warning: smpart: kernel 'by_symbol' not transformed: its address is taken at line [[@LINE-3]]
// WARN-NEXT: {{^}}{{.*}}get-func-by-symbol.cu:[[@LINE-4]]:41: note: address of the kernel taken here
// CHECK: {{^}}__global__ void by_symbol(int *p) {
