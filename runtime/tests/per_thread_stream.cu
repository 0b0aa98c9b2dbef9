// Compiled with --default-stream per-thread (runtime/tests/CMakeLists.txt):
// a rewritten launch on stream 0 must use the calling thread's default
// stream, as <<<..., 0>>> does in this translation unit.
#include "gpu_kernels.cuh"

namespace smpart_test {

cudaError_t launchOnPerThreadDefaultStreamCaptured(BlockRecord *rec,
                                                   float *out,
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
    err = cudaStreamSynchronize(0);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  return err;
}

} // namespace smpart_test
