// RUN: %smpart %s -- %stubflags | FileCheck %s
// RUN: %smpart %s -- %stubflags | FileCheck %s --check-prefix=NOREG
// Each kernel that global scope can name is registered at static
// initialisation (host pass only), so that libsmpart loads it before any
// rewritten kernel can spin under lazy module loading. Templates and class
// members are not registered: their instances load at their first launch.
#include "cuda.h"

namespace app {
__global__ void scale(float *p, int n) { p[blockIdx.x] *= n; }
__global__ void scale(int *p) { p[blockIdx.x] = 1; }
} // namespace app

namespace {
__global__ void hidden(int *p) { p[blockIdx.x] = 2; }
} // namespace

template <class T> __global__ void fill(T *p) { p[blockIdx.x] = T(); }

struct Holder {
  static __global__ void member(int *p) { p[blockIdx.x] = 3; }
};

void run(float *f, int *i) {
  app::scale<<<1, 32>>>(f, 2);
  app::scale<<<1, 32>>>(i);
  hidden<<<1, 32>>>(i);
  fill<<<1, 32>>>(i);
}

// CHECK: {{^}}#if !defined(__CUDA_ARCH__) && !defined(SMPART_EMULATION)
// CHECK-DAG: {{^}}static const bool smpart_registered_10_scale = ::smpart::detail::registerKernel(reinterpret_cast<const void *>(static_cast<void (*)(smpart::LaunchControl, float *, int)>(&app::scale)), "app::scale");
// CHECK-DAG: {{^}}static const bool smpart_registered_11_scale = ::smpart::detail::registerKernel(reinterpret_cast<const void *>(static_cast<void (*)(smpart::LaunchControl, int *)>(&app::scale)), "app::scale");
// CHECK-DAG: {{^}}static const bool smpart_registered_15_hidden = ::smpart::detail::registerKernel(reinterpret_cast<const void *>(static_cast<void (*)(smpart::LaunchControl, int *)>(&hidden)), "hidden");
// NOREG-NOT: {{^}}static const bool smpart_registered_{{[0-9]+}}_{{fill|member}}
