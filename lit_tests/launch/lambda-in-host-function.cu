// RUN: %smpart --keep-original=headers %s -o %t.cu -- %stubflags -fgpu-rdc 2>&1 | FileCheck --check-prefix=WARN %s
// RUN: FileCheck %s < %t.cu
// Clang makes a lambda without __host__/__device__ both; nvcc compiles it
// for the side of the function it is written in. A launch in a lambda in a
// host function (or at namespace scope) is a host launch and is rewritten;
// one in a lambda in a kernel or a device function is a device-side launch,
// which refuses the kernel it launches.
#include "cuda.h"

__global__ void fill(int *out) { out[threadIdx.x] = 1; }
__global__ void child(int *out) { out[threadIdx.x] = 2; }

void host(int *p) {
  auto go = [&](int n) { fill<<<n, 32>>>(p); };
  go(4);
  auto nested = [=] { [=] { fill<<<2, 32>>>(p); }(); };
  nested();
}
auto atNamespace = [](int *p) { fill<<<1, 32>>>(p); };

__global__ void parent(int *p) {
  auto go = [=] { child<<<1, 32>>>(p); };
  go();
}

// WARN-NOT: kernel 'fill' not transformed
// WARN: lambda-in-host-function.cu:[[@LINE-5]]:19: warning: smpart: kernel 'child' not transformed: launched from device code in 'parent(int *)::(lambda)::operator()' (dynamic parallelism)
// WARN-NOT: kernel 'fill' not transformed
// CHECK: {{^}}  auto go = [&](int n) { smpart::launchRewritten({"fill",
// CHECK: {{^}}  auto nested = [=] { [=] { smpart::launchRewritten({"fill",
// CHECK: {{^}}auto atNamespace = [](int *p) { smpart::launchRewritten({"fill",
// CHECK: {{^}}  auto go = [=] { child<<<1, 32>>>(p); };
