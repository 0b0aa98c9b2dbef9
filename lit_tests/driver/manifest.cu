// RUN: rm -rf %t && mkdir -p %t
// RUN: %smpart %s --manifest=%t/m.json -o %t/out.cu -- %stubflags
// RUN: FileCheck %s < %t/m.json
// The manifest lists every kernel with its mangled name, place, status,
// reasons, parameters and resource hints.
#include "cuda.h"

__global__ void __launch_bounds__(128, 4) bounded(int n, const float *x) {}
__global__ void synced(int *p) { cooperative_groups::this_grid().sync(); }

// CHECK: {{^}}  "schema": "smpart.manifest/1",
// CHECK: {{^}}      "file": "{{.*}}manifest.cu",
// CHECK-NEXT: {{^}}      "already_transformed": false,
// CHECK: {{^}}          "name": "bounded",
// CHECK-NEXT: {{^}}          "mangled_name": "_Z7boundediPKf",
// CHECK-NEXT: {{^}}          "location": {
// CHECK-NEXT: {{^}}            "file": "{{.*}}manifest.cu",
// CHECK-NEXT: {{^}}            "line": 8,
// CHECK-NEXT: {{^}}            "column": 43
// CHECK-NEXT: {{^}}          },
// CHECK-NEXT: {{^}}          "status": "transformed",
// CHECK-NEXT: {{^}}          "reasons": [],
// CHECK-NEXT: {{^}}          "warnings": [],
// CHECK-NEXT: {{^}}          "parameters": [
// CHECK-NEXT: {{^}}            "int n",
// CHECK-NEXT: {{^}}            "const float * x"
// CHECK-NEXT: {{^}}          ],
// CHECK-NEXT: {{^}}          "resource_hints": {
// CHECK-NEXT: {{^}}            "max_threads_per_block": "128",
// CHECK-NEXT: {{^}}            "min_blocks_per_sm": "4"
// CHECK-NEXT: {{^}}          }
// CHECK: {{^}}          "name": "synced",
// CHECK: {{^}}          "status": "refused",
// CHECK-NEXT: {{^}}          "reasons": [
// CHECK-NEXT: {{^}}            "cooperative_groups::this_grid() spans the physical grid (grid-wide sync or block ranks)",
// CHECK-NEXT: {{^}}            "grid-wide synchronisation (grid_group::sync)"
// CHECK-NEXT: {{^}}          ],
