// RUN: not %smpart %s --runtime-include=%t.missing -- %stubflags 2>&1 | FileCheck %s
// RUN: %smpart %s --runtime-include=%runtime_include -- %stubflags | FileCheck --check-prefix=OK %s
// A --runtime-include that is not smpart's headers is bad usage, said
// before anything is parsed (a typo would otherwise show up as unknown
// types in files an earlier run rewrote).
#include "cuda.h"
__global__ void k(int *p) { p[0] = 1; }

// CHECK: {{^}}smpart-transform: error: --runtime-include='{{.*}}.missing' holds no smpart/device.cuh
// OK: {{^}}__global__ void k(smpart::LaunchControl smpart_ctl, int *p) {
