// RUN: %smpart --keep-original=headers %s -- %stubflags | FileCheck %s
// A launch in a host function template is rewritten once, in the pattern;
// with dependent arguments no single address exists, so it is `nullptr`.
#include "cuda.h"

template <typename T> __global__ void scale(T *x, T a) {}

template <typename T> void run(T *x, T a) {
  scale<T><<<1, 64>>>(x, a);
}

void both(float *f, int *i) {
  run(f, 1.0f);
  run(i, 1);
}

// CHECK: {{^}}  smpart::launchRewritten({"scale", nullptr}, 1, 64, 0, 0, [smpart_args = std::make_tuple(x, a)](const smpart::LaunchParams &smpart_p) { std::apply([&](const auto &...smpart_a) { scale<T><<<smpart_p.grid,
// CHECK-NOT: {{^}}  smpart::launchRewritten(
