// RUN: %smpart %s -o %t.cu -- %stubflags 2>&1 | FileCheck --allow-empty --check-prefix=DIAG %s
// RUN: FileCheck %s < %t.cu
// nvcc accepts inline asm operands with no comma between them
// (`::"r"(v) "l"(p)`, as in the CUDA samples' multi-device CG); clang's
// parser stops at the second constraint. The parse reads a copy with the
// comma, so the kernel is transformed and the output keeps the original
// spelling.
#include "cuda.h"

__global__ void release(unsigned char *flag, unsigned v) {
  asm volatile("st.release.sys.global.u8 [%1], %0;" ::"r"(v) "l"(flag)
               : "memory");
  flag[blockIdx.x + 1] = 0;
}
// DIAG-NOT: error
// CHECK: smpart::LaunchControl smpart_ctl, unsigned char *flag
// CHECK: ::"r"(v) "l"(flag)
// CHECK: flag[smpart_cta.blockIdx().x + 1] = 0;
