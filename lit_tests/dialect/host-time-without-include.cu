// REQUIRES: cuda-toolkit
// RUN: %smpart %s -o %t.cu 2>&1 | FileCheck --allow-empty --check-prefix=QUIET %s
// RUN: FileCheck %s < %t.cu
// nvcc's headers include <time.h>, <stdio.h>, <stdlib.h> for every
// translation unit, and host code relies on it (time(), clock()).
__global__ void k(int *p) { p[blockIdx.x] = 1; }
int main() {
  srand(time(NULL));
  printf("%ld\n", (long)clock());
  return 0;
}
// QUIET-NOT: error
// CHECK: smpart_cta.blockIdx()
