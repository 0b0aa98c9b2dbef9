// RUN: cp %s %t.cu
// RUN: %smpart --diff --export-fixes=%t.yaml %t.cu -- %stubflags > /dev/null
// RUN: FileCheck %s < %t.yaml
// RUN: cmp %s %t.cu
// The rewrite as replacements in clang-apply-replacements' format.
#include "cuda.h"

__global__ void k(int *p) { p[0] = 1; }

// CHECK: MainSourceFile: '{{.*}}export-fixes.cu.tmp.cu'
// CHECK: Replacements:
// CHECK: - FilePath: '{{.*}}.cu'
// CHECK-NEXT: Offset: 0
// CHECK-NEXT: Length: 0
// CHECK-NEXT: ReplacementText: "// smpart-transform: rewritten from
// CHECK: ReplacementText: 'smpart::LaunchControl smpart_ctl, '
