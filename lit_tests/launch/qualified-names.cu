// RUN: %smpart --keep-original=headers %s -- %stubflags | FileCheck %s
// Launches of namespaced and static member kernels keep the qualified
// spelling and report the qualified name.
#include "cuda.h"

namespace app {
__global__ void nk(int *p) {}
}
struct Ops {
  static __global__ void clear(int *p) {}
};

void run(int *p) {
  app::nk<<<1, 1>>>(p);
  Ops::clear<<<1, 1>>>(p);
}

// CHECK: {{^}}  smpart::launchRewritten({"app::nk", reinterpret_cast<const void *>(&app::nk)}, 1, 1, 0, 0, [smpart_args = std::make_tuple(p)](const smpart::LaunchParams &smpart_p) { std::apply([&](const auto &...smpart_a) { app::nk<<<
// CHECK-NEXT: {{^}}  smpart::launchRewritten({"Ops::clear", reinterpret_cast<const void *>(&Ops::clear)}, 1, 1, 0, 0, [smpart_args = std::make_tuple(p)](const smpart::LaunchParams &smpart_p) { std::apply([&](const auto &...smpart_a) { Ops::clear<<<
