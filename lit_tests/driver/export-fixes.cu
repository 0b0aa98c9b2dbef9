// RUN: rm -rf %t && mkdir -p %t && cp %s %t/k.cu
// RUN: %smpart --diff --export-fixes=%t/fixes.yaml %t/k.cu -- %stubflags > /dev/null
// RUN: FileCheck %s < %t/fixes.yaml
// RUN: cmp %s %t/k.cu
// RUN: %smpart %t/k.cu -o %t/expected.cu -- %stubflags
// RUN: clang-apply-replacements %t
// RUN: cmp %t/expected.cu %t/k.cu
// The rewrite as replacements in clang-apply-replacements' format; applying
// them gives what -o writes.
#include "cuda.h"

__global__ void k(int *p) { p[0] = 1; }
void run(int *p) { k<<<1, 1>>>(p); }

// CHECK: MainSourceFile: '{{.*}}k.cu'
// CHECK: Replacements:
// CHECK: - FilePath: '{{.*}}k.cu'
// CHECK-NEXT: Offset: 0
// CHECK-NEXT: Length: 0
// CHECK-NEXT: ReplacementText: "// smpart-transform: rewritten from
// CHECK: ReplacementText: 'smpart::LaunchControl smpart_ctl, '
