// Built with CUDA_API_PER_THREAD_DEFAULT_STREAM defined, as nvcc defines it
// for `--default-stream per-thread`: a rewritten launch on stream 0 from
// such a translation unit must reach the runtime as the per-thread stream,
// not as the legacy stream that 0 means inside libsmpart.
#include "smpart/runtime.hpp"

#include <gtest/gtest.h>

#if !defined(CUDA_API_PER_THREAD_DEFAULT_STREAM)
#error "compile this file with -DCUDA_API_PER_THREAD_DEFAULT_STREAM"
#endif

TEST(Streams, DefaultStreamIsPerThreadWhereTheCallerSaysSo) {
  EXPECT_EQ(smpart::detail::callerStream(nullptr), cudaStreamPerThread);
  cudaStream_t mine = reinterpret_cast<cudaStream_t>(0x1234);
  EXPECT_EQ(smpart::detail::callerStream(mine), mine);
}
