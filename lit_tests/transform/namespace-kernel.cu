// RUN: %smpart %s -- %stubflags | FileCheck %s
// Kernels in (nested) namespaces are rewritten like others.
#include "cuda.h"

namespace app {
namespace detail {
__global__ void inner(int *p) { p[blockIdx.x] = 1; }
} // namespace detail
} // namespace app

// CHECK: {{^}}__global__ void inner(smpart::LaunchControl smpart_ctl, int *p) {
// CHECK: {{^}}    const uint3 blockIdx = smpart_cta.blockIdx();
