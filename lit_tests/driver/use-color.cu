// RUN: %smpart %s -o %t.cu --use-color -- %stubflags 2>&1 | FileCheck %s
// RUN: %smpart %s -o %t.cu -- %stubflags 2>&1 | FileCheck --check-prefix=PLAIN %s
// With colour (a terminal, or --use-color) smpart's warnings come through
// clang's printer with escapes and the source line; piped, one line.
#include "cuda.h"
__global__ void k(int *p) {
  cooperative_groups::this_grid().sync();
}
void run(int *p) { k<<<1, 1>>>(p); }
// CHECK: {{.*}}warning: {{.*}}smpart: kernel 'k' not transformed
// CHECK: cooperative_groups::this_grid().sync();
// CHECK-NEXT: ^
// PLAIN: use-color.cu:[[@LINE-6]]:3: warning: smpart: kernel 'k' not transformed
// PLAIN-NOT: ^
