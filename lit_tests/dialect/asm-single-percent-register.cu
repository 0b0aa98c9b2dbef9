// REQUIRES: cuda-toolkit
// RUN: %smpart %s -o %t.cu 2>&1 | FileCheck --allow-empty --check-prefix=DIAG %s
// RUN: FileCheck %s < %t.cu
// RUN: %smpart %s -o %t.ctaid.cu -- -DREAD_CTAID 2>&1 | FileCheck --check-prefix=CTAID %s
// nvcc passes a PTX special register written with one % (%globaltimer)
// through inline asm; clang calls it an invalid escape. The parse reads a
// copy where it is spelled %%, so the kernel is transformed and the output
// keeps the original spelling; a kernel reading the physical block index
// (%ctaid/%nctaid) is seen, and refused.
__global__ void k(unsigned long long *p) {
  unsigned long long t;
  asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t));
#ifdef READ_CTAID
  unsigned c;
  asm volatile("mov.u32 %0, %ctaid.x;" : "=r"(c));
#endif
  p[blockIdx.x] = t;
}
// DIAG-NOT: error
// CHECK: smpart_cta.blockIdx()
// CHECK: asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t));
// CTAID: warning: smpart: kernel 'k' not transformed: inline asm reads %ctaid/%nctaid
