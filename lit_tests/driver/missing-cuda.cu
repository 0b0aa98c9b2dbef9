// RUN: not %smpart %s --cuda-path=%t/nonexistent -- 2>&1 | FileCheck --check-prefix=ERR %s
// Without -nocudainc the CUDA headers are needed: a missing toolkit is one
// clear error naming --cuda-path, not a flood of clang errors.
#include "cuda.h"
__global__ void k() {}

// ERR: {{^}}smpart-transform: error: no CUDA installation found at '{{.*}}nonexistent' (no include/cuda_runtime.h); pass --cuda-path=<CUDA toolkit root>, or -nocudainc -nocudalib after `--` for header-free code
// ERR-NOT: {{^}}{{.*}}error:
