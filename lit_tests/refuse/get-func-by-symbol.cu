// RUN: %smpart %s -o %t.cu -- %stubflags 2>&1 | FileCheck --check-prefix=WARN %s
// RUN: FileCheck %s < %t.cu
// cudaGetFuncBySymbol is not a query: the handle it returns is launched
// through cuLaunchKernel with the original argument list. Like any other
// use of the address, it names the original kernel, kept beside the
// rewritten one that the <<<>>> launch runs.
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
// WARN: {{^}}{{.*}}get-func-by-symbol.cu:[[@LINE-3]]:41: warning: smpart: kernel 'by_symbol' keeps its original definition beside the rewritten one for the use of its address at line [[@LINE-3]]
// CHECK: {{^}}__global__ void by_symbol(int *p) {
// CHECK: {{^}}__global__ void by_symbol(smpart::LaunchControl smpart_ctl, int *p) {
// CHECK: cudaGetFuncBySymbol(&f, (const void *)smpart::original(by_symbol, by_symbol));
