// RUN: %smpart %s -- %stubflags | FileCheck %s
// RUN: %smpart %s -- %stubflags | FileCheck %s --check-prefix=NOREG
// Each kernel that global scope can name is registered at static
// initialisation (host pass only), so that libsmpart loads it before any
// rewritten kernel can spin under lazy module loading; of a template, every
// instance the file makes, named by its arguments. Class members are not
// registered (access), nor instances whose arguments global scope cannot
// spell (a local, private or unnamed type).
#include "cuda.h"

namespace app {
__global__ void scale(float *p, int n) { p[blockIdx.x] *= n; }
__global__ void scale(int *p) { p[blockIdx.x] = 1; }
} // namespace app

namespace {
__global__ void hidden(int *p) { p[blockIdx.x] = 2; }
} // namespace

template <class T> __global__ void fill(T *p) { p[blockIdx.x] = T(); }

namespace app {
struct Cell {
  int v;
};
template <int N, class... Ts> __global__ void pack(Ts *...p) {}
} // namespace app

template <class T> void fillOn(T *p) { fill<<<1, 32>>>(p); }

struct Holder {
  static __global__ void member(int *p) { p[blockIdx.x] = 3; }
  static void run(int *p);

private:
  struct Secret {
    int v;
  };
};
void Holder::run(int *) {
  Secret *s = nullptr;
  fill<<<1, 32>>>(s);
}

void run(float *f, int *i) {
  app::scale<<<1, 32>>>(f, 2);
  app::scale<<<1, 32>>>(i);
  hidden<<<1, 32>>>(i);
  fill<<<1, 32>>>(i);
  fillOn(f);
  app::Cell *c = nullptr;
  fill<<<1, 32>>>(c);
  struct Local {
    int v;
  };
  Local *l = nullptr;
  fill<<<1, 32>>>(l);
  struct {
    int v;
  } *unnamed = nullptr;
  fill<<<1, 32>>>(unnamed);
  app::pack<4><<<1, 32>>>(f, c);
}

// CHECK: {{^}}#if !defined(__CUDA_ARCH__) && !defined(SMPART_EMULATION)
// CHECK-DAG: {{^}}static const bool smpart_registered_12_scale = ::smpart::detail::registerKernel(reinterpret_cast<const void *>(static_cast<void (*)(smpart::LaunchControl, float *, int)>(&app::scale)), "app::scale");
// CHECK-DAG: {{^}}static const bool smpart_registered_13_scale = ::smpart::detail::registerKernel(reinterpret_cast<const void *>(static_cast<void (*)(smpart::LaunchControl, int *)>(&app::scale)), "app::scale");
// CHECK-DAG: {{^}}static const bool smpart_registered_17_hidden = ::smpart::detail::registerKernel(reinterpret_cast<const void *>(static_cast<void (*)(smpart::LaunchControl, int *)>(&hidden)), "hidden");
// CHECK-DAG: {{^}}static const bool smpart_registered_20_fill_{{[0-9A-F]+}} = ::smpart::detail::registerKernel(reinterpret_cast<const void *>(static_cast<void (*)(smpart::LaunchControl, int *)>(&fill<int>)), "fill");
// CHECK-DAG: {{^}}static const bool smpart_registered_20_fill_{{[0-9A-F]+}} = ::smpart::detail::registerKernel(reinterpret_cast<const void *>(static_cast<void (*)(smpart::LaunchControl, float *)>(&fill<float>)), "fill");
// CHECK-DAG: {{^}}static const bool smpart_registered_20_fill_{{[0-9A-F]+}} = ::smpart::detail::registerKernel(reinterpret_cast<const void *>(static_cast<void (*)(smpart::LaunchControl, app::Cell *)>(&fill<app::Cell>)), "fill");
// CHECK-DAG: {{^}}static const bool smpart_registered_26_pack_{{[0-9A-F]+}} = ::smpart::detail::registerKernel(reinterpret_cast<const void *>(static_cast<void (*)(smpart::LaunchControl, float *, app::Cell *)>(&app::pack<4, float, app::Cell>)), "app::pack");
// NOREG-NOT: {{^}}static const bool smpart_registered_{{[0-9]+}}_member
// NOREG-NOT: {{^}}static const bool {{.*}}Local
// NOREG-NOT: {{^}}static const bool {{.*}}Secret
// NOREG-NOT: {{^}}static const bool {{.*}}unnamed
