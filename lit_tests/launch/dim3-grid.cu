// RUN: %smpart --keep-original=headers %s -- %stubflags | FileCheck %s
// dim3 grids and blocks, named or temporary, are passed as written.
#include "cuda.h"

__global__ void tile2d(float *m) {}

void run(float *m, int w, int h) {
  dim3 block(16, 16);
  dim3 grid((w + 15) / 16, (h + 15) / 16);
  tile2d<<<grid, block>>>(m);
  tile2d<<<dim3(4, 4, 2), dim3(8, 8)>>>(m);
}

// CHECK: {{^}}  smpart::launchRewritten({"tile2d", reinterpret_cast<const void *>(&tile2d)}, grid, block, 0, 0, [smpart_args = std::make_tuple(m)]
// CHECK: {{^}}  smpart::launchRewritten({"tile2d", reinterpret_cast<const void *>(&tile2d)}, dim3(4, 4, 2), dim3(8, 8), 0, 0, [smpart_args = std::make_tuple(m)]
