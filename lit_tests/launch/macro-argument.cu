// RUN: %smpart --keep-original=headers %s -- %stubflags | FileCheck %s
// A launch written as a macro argument is rewritten where it is spelled.
#include "cuda.h"

#define CHECK(...) (__VA_ARGS__)

__global__ void k(int *x) {}

void run(int *x) {
  CHECK(k<<<1, 1>>>(x));
}

// CHECK: {{^}}#define CHECK(...) (__VA_ARGS__)
// CHECK: {{^}}  CHECK(smpart::launchRewritten({"k", reinterpret_cast<const void *>(&k)}, 1, 1, 0, 0, [smpart_args = std::make_tuple(x)](const smpart::LaunchParams &smpart_p) { std::apply([&](const auto &...smpart_a) { k<<<smpart_p.grid, smpart_p.block, smpart_p.smem, smpart_p.stream>>>(smpart_p.ctl, smpart_a...); }, smpart_args); }));
