// CUDA 12 calls that CUDA 13 changed, as corpora written for CUDA 12 still
// make them. run_corpus.py pre-includes this (-include) in nvcc's and in the
// tool's parse of a corpus that needs it: a port of the corpus to the
// toolkit, like a distribution's patch, not a change of its code.
#pragma once

#include <cuda_runtime_api.h>

// CUDA 13 takes a cudaMemLocation where CUDA 12 took a device ordinal
// (cudaCpuDeviceId for the host).
static inline cudaError_t cudaMemAdvise(const void *Ptr, size_t Bytes,
                                        cudaMemoryAdvise Advice, int Device) {
  cudaMemLocation Where{};
  Where.type = Device == cudaCpuDeviceId ? cudaMemLocationTypeHost
                                         : cudaMemLocationTypeDevice;
  Where.id = Device;
  return cudaMemAdvise(Ptr, Bytes, Advice, Where);
}
