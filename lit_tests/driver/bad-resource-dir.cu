// RUN: not %smpart %s --resource-dir=%t/none -- %stubflags 2>&1 | FileCheck --check-prefix=ERR %s
// A resource directory without clang's CUDA wrapper headers is rejected
// with an error naming --resource-dir.
#include "cuda.h"
__global__ void k() {}

// ERR: {{^}}smpart-transform: error: clang resource directory '{{.*}}none' has no include/__clang_cuda_runtime_wrapper.h; pass --resource-dir=<clang-22 resource dir> (e.g. /usr/lib/llvm-22/lib/clang/22)
