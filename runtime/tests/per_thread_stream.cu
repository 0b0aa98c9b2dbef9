// Compiled with --default-stream per-thread (runtime/tests/CMakeLists.txt):
// a rewritten launch on stream 0 must use the calling thread's default
// stream, as <<<..., 0>>> does in this translation unit.
#include "gpu_kernels.cuh"

#include <chrono>
#include <thread>

namespace smpart_test {
namespace {

/// cudaStreamSynchronize(0) with a deadline, written out here: the inline
/// helpers of bounded_wait.hpp, compiled in this translation unit, would
/// mean the per-thread stream by 0 and clash with their legacy-stream
/// definitions in the others.
cudaError_t syncWithin(double seconds) {
  const auto end =
      std::chrono::steady_clock::now() +
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          std::chrono::duration<double>(seconds));
  for (;;) {
    const cudaError_t e = cudaStreamQuery(0);
    if (e != cudaErrorNotReady)
      return e;
    if (std::chrono::steady_clock::now() >= end)
      return cudaErrorTimeout;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

} // namespace

cudaError_t launchOnPerThreadDefaultStreamCaptured(BlockRecord *rec, float *out,
                                                   unsigned blocks) {
  cudaGraph_t graph = nullptr;
  cudaError_t err =
      cudaStreamBeginCapture(cudaStreamPerThread, cudaStreamCaptureModeGlobal);
  if (err != cudaSuccess)
    return err;
  smpart::KernelHandle h = launchRecord(dim3(blocks), 64, 0, rec, out, 0);
  err = cudaStreamEndCapture(cudaStreamPerThread, &graph);
  if (err != cudaSuccess)
    return err;
  if (!h.status().ok() || !h.captured())
    return cudaErrorUnknown;
  cudaGraphExec_t exec = nullptr;
  if ((err = cudaGraphInstantiate(&exec, graph, 0)) != cudaSuccess)
    return err;
  err = cudaGraphLaunch(exec, 0);
  if (err == cudaSuccess)
    err = syncWithin(10);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  return err;
}

} // namespace smpart_test
