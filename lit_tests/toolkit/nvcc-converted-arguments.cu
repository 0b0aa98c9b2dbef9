// REQUIRES: nvcc, cuda-toolkit
// RUN: rm -rf %t && mkdir -p %t
// RUN: %smpart %s -o %t/out.cu --cuda-path=%cuda_path --
// RUN: FileCheck %s < %t/out.cu
// RUN: %nvcc -arch=sm_90 -c -I %runtime_include %t/out.cu -o %t/out.o
// Arguments that only become their parameter's type at the call: a braced
// list (std::make_tuple cannot take one) and a converting constructor
// (which would otherwise run again at every relaunch). Such a launch
// captures every argument converted to its parameter's type, spelled fully
// qualified; launches without one keep std::make_tuple.
#include <cuda_runtime.h>

namespace geo {
struct Box { int lo, hi; };
struct View {
  float *data;
  __host__ __device__ View(float *d) : data(d) {}
};
} // namespace geo

__global__ void clamp(geo::Box box, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= box.lo && i < box.hi)
    y[i] = 0;
}
__global__ void touch(geo::View v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    v.data[i] += 1;
}

void run(float *y, int n) {
  clamp<<<4, 256>>>({0, n}, y);
  touch<<<4, 256>>>(y, n);
  clamp<<<4, 256>>>(geo::Box{1, n}, y);
}
// CHECK: {{^}}  smpart::launchRewritten({"clamp",
// CHECK-SAME: [smpart_args = std::tuple<geo::Box, float *>({0, n}, y)]
// CHECK: {{^}}  smpart::launchRewritten({"touch",
// CHECK-SAME: [smpart_args = std::tuple<geo::View, int>(y, n)]
// CHECK: {{^}}  smpart::launchRewritten({"clamp",
// CHECK-SAME: [smpart_args = std::make_tuple(geo::Box{1, n}, y)]
