// RUN: %smpart --keep-original=headers %s -- %stubflags | FileCheck %s
// All four configuration arguments are passed on as written.
#include "cuda.h"

__global__ void work(int *p) {}

void run(int *p, cudaStream_t stream) {
  work<<<8, 32, 0, stream>>>(p);
}

// CHECK: {{^}}  smpart::launchRewritten({"work", reinterpret_cast<const void *>(&work)}, 8, 32, 0, stream, [smpart_args = std::make_tuple(p)]
