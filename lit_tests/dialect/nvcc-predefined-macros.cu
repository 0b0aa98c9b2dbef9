// REQUIRES: cuda-toolkit
// RUN: %smpart %s -o %t.cu --cuda-path=%cuda_path -- 2>&1 | FileCheck --allow-empty --check-prefix=QUIET %s
// RUN: FileCheck %s < %t.cu
// nvcc predefines its version (__CUDACC_VER_MAJOR__, ...) and the runtime
// API version derived from it; clang does not, so headers and programs
// that test them took the other branch in the tool's parse. The parse
// defines them from the toolkit's cuda.h (toolkit/nvcc-intrinsics-current
// compares with what nvcc itself defines).
#include <cuda_runtime.h>

#if !defined(__CUDACC_VER_MAJOR__) || !defined(__CUDACC_VER_MINOR__) ||     \
    !defined(__CUDACC_VER_BUILD__)
#error "no nvcc version"
#endif
#if __CUDACC_VER_MAJOR__ * 1000 + __CUDACC_VER_MINOR__ * 10 != CUDART_VERSION
#error "nvcc version differs from the toolkit's"
#endif
#if __CUDA_API_VER_MAJOR__ != __CUDACC_VER_MAJOR__
#error "no API version"
#endif

#if __CUDACC_VER_MAJOR__ >= 11
__global__ void modern(int *p) { p[blockIdx.x] = 1; }
#else
__global__ void legacy(int *p) { p[blockIdx.x] = 1; }
#endif
// QUIET-NOT: error
// CHECK: __global__ void modern(smpart::LaunchControl smpart_ctl, int *p)
// CHECK: __global__ void legacy(int *p)
