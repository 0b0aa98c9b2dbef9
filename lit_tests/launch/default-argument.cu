// RUN: %smpart --keep-original=headers %s -- %stubflags | FileCheck %s
// A launch that omits a defaulted argument captures only the written ones;
// the relaunch gets the default from the kernel's declaration again.
#include "cuda.h"

__global__ void step(float *y, float by = 1.0f) {}

void run(float *y) {
  step<<<1, 32>>>(y);
}

// CHECK: {{^}}  smpart::launchRewritten({"step", reinterpret_cast<const void *>(&step)}, 1, 32, 0, 0, [smpart_args = std::make_tuple(y)](const smpart::LaunchParams &smpart_p) { std::apply([&](const auto &...smpart_a) { step<<<smpart_p.grid, smpart_p.block, smpart_p.smem, smpart_p.stream>>>(smpart_p.ctl, smpart_a...); }, smpart_args); });
