// RUN: %smpart --keep-original=headers %s -- %stubflags | FileCheck %s
// A written dynamic shared memory size is kept; the stream defaults to 0.
#include "cuda.h"

__global__ void reduce(const float *x, float *out) {}

void run(const float *x, float *out) {
  reduce<<<64, 128, 128 * sizeof(float)>>>(x, out);
}

// CHECK: {{^}}  smpart::launchRewritten({"reduce", reinterpret_cast<const void *>(&reduce)}, 64, 128, 128 * sizeof(float), 0, [smpart_args = std::make_tuple(x, out)]
