// REQUIRES: cuda-toolkit
// RUN: %smpart %s -o %t.cu 2>&1 | FileCheck --check-prefix=DIAG %s
// RUN: FileCheck %s < %t.cu
// RUN: not %smpart %s -o %t.ctaid.cu -- -DREAD_CTAID 2>&1 | FileCheck --check-prefix=CTAID %s
// nvcc passes a PTX special register written with one % (%globaltimer)
// through inline asm; clang calls it an invalid escape. Accepted with a
// note, except for %ctaid/%nctaid: clang drops the asm from its AST, and a
// kernel reading the physical block index must be seen to be refused.
__global__ void k(unsigned long long *p) {
  unsigned long long t;
  asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t));
#ifdef READ_CTAID
  unsigned c;
  asm volatile("mov.u32 %0, %ctaid.x;" : "=r"(c));
#endif
  p[blockIdx.x] = t;
}
// DIAG: note: nvcc accepts this (a PTX special register spelled with a single % in inline asm)
// DIAG-NOT: error
// CHECK: smpart_cta.blockIdx()
// CHECK: asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t));
// CTAID: error: invalid % escape in inline assembly string
// CTAID: does not compile; nothing was written
