// GPU tests (label gpu, part of runtime_gpu_test) of what the runtime asks
// of CUDA around stream capture, graph replays and the SM-id probe. The
// same properties are checked without a GPU against a CUDA stand-in
// (fake_cuda/runtime_fake_cuda_test.cpp). Each test skips without a GPU.
#include "gpu_kernels.cuh"
#include "gpu_test_checks.hpp"
#include "smpart/runtime.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

using smpart_test::BlockRecord;
using Clock = std::chrono::steady_clock;

bool streamDoneWithin(cudaStream_t s, double seconds) {
  const auto end = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(seconds));
  while (Clock::now() < end) {
    const cudaError_t q = cudaStreamQuery(s);
    if (q != cudaErrorNotReady)
      return q == cudaSuccess;
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  return false;
}

/// Occupies every thread slot of every SM until the host opens the gate.
__global__ void fillSms(const volatile unsigned *open) {
  while (!*open)
    __nanosleep(1000);
}

class GpuCapture : public ::testing::Test {
protected:
  void SetUp() override {
    // No smpart call here: some tests need the runtime's first use.
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0)
      GTEST_SKIP() << "no usable CUDA GPU";
    CHECK_CUDA(
        cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, 0));
    CHECK_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    watchdog_ = smpart_test::watchCurrentTest();
  }
  void TearDown() override {
    if (stream_)
      cudaStreamDestroy(stream_);
    for (void *p : allocs_)
      cudaFree(p);
    watchdog_.reset();
  }
  BlockRecord *records(unsigned blocks) {
    BlockRecord *r = nullptr;
    EXPECT_EQ(cudaMalloc(&r, blocks * sizeof(BlockRecord)), cudaSuccess);
    EXPECT_EQ(cudaMemset(r, 0, blocks * sizeof(BlockRecord)), cudaSuccess);
    // The legacy stream is not ordered with the non-blocking streams.
    EXPECT_EQ(smpart_test::syncStream(0), cudaSuccess);
    allocs_.push_back(r);
    return r;
  }
  float *outputs(unsigned blocks) {
    float *o = nullptr;
    EXPECT_EQ(cudaMalloc(&o, blocks * 64 * sizeof(float)), cudaSuccess);
    allocs_.push_back(o);
    return o;
  }
  void expectRuns(const BlockRecord *rec, unsigned blocks, unsigned runs) {
    std::vector<BlockRecord> r(blocks);
    ASSERT_EQ(cudaMemcpy(r.data(), rec, blocks * sizeof(BlockRecord),
                         cudaMemcpyDeviceToHost),
              cudaSuccess);
    for (unsigned b = 0; b < blocks; ++b)
      ASSERT_EQ(r[b].runs, runs) << "block " << b;
  }

  int sms_ = 0;
  cudaStream_t stream_ = nullptr;
  std::vector<void *> allocs_;
  std::unique_ptr<smpart_test::Watchdog> watchdog_;
};

// The process's first launch (the control-block pool is created) inside a
// capture of a blocking stream, in each capture mode.
TEST_F(GpuCapture, FirstLaunchInsideCaptureIsLegalInEveryMode) {
  const unsigned blocks = 2000;
  float *out = outputs(blocks);
  for (cudaStreamCaptureMode mode :
       {cudaStreamCaptureModeGlobal, cudaStreamCaptureModeThreadLocal,
        cudaStreamCaptureModeRelaxed}) {
    SCOPED_TRACE("capture mode " + std::to_string(mode));
    BlockRecord *rec = records(blocks);
    cudaStream_t blocking = nullptr;
    CHECK_CUDA(cudaStreamCreate(&blocking));
    CHECK_CUDA(cudaStreamBeginCapture(blocking, mode));
    smpart::KernelHandle h =
        smpart_test::launchRecord(dim3(blocks), 64, blocking, rec, out, 0);
    cudaGraph_t g = nullptr;
    CHECK_CUDA(cudaStreamEndCapture(blocking, &g));
    ASSERT_TRUE(h.status().ok()) << h.status().message();
    cudaGraphExec_t x = nullptr;
    CHECK_CUDA(cudaGraphInstantiate(&x, g, 0));
    CHECK_CUDA(cudaGraphLaunch(x, blocking));
    ASSERT_TRUE(streamDoneWithin(blocking, 10));
    expectRuns(rec, blocks, 1);
    cudaGraphExecDestroy(x);
    cudaGraphDestroy(g);
    cudaStreamDestroy(blocking);
  }
}

// Each replay starts from clean Notices: while a replay runs, the handle
// does not report the previous replay's completion.
TEST_F(GpuCapture, ReplayStartsFromCleanNotices) {
  const unsigned blocks = static_cast<unsigned>(sms_) * 32 * 8;
  BlockRecord *rec = records(blocks);
  float *out = outputs(blocks);
  CHECK_CUDA(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeGlobal));
  smpart::KernelHandle h =
      smpart_test::launchRecord(dim3(blocks), 64, stream_, rec, out, 20000);
  cudaGraph_t g = nullptr;
  CHECK_CUDA(cudaStreamEndCapture(stream_, &g));
  ASSERT_TRUE(h.status().ok()) << h.status().message();
  cudaGraphExec_t x = nullptr;
  CHECK_CUDA(cudaGraphInstantiate(&x, g, 0));
  for (unsigned replay = 1; replay <= 2; ++replay) {
    CHECK_CUDA(cudaGraphLaunch(x, stream_));
    bool saw_running = false;
    smpart::Progress p;
    const auto end = Clock::now() + std::chrono::seconds(10);
    while (cudaStreamQuery(stream_) == cudaErrorNotReady && Clock::now() < end)
      if (h.progress(p).ok() && !p.finished)
        saw_running = true;
    ASSERT_TRUE(streamDoneWithin(stream_, 10));
    EXPECT_TRUE(saw_running)
        << "replay " << replay << " reported finished while it ran";
    ASSERT_TRUE(h.progress(p).ok());
    EXPECT_TRUE(p.finished) << "replay " << replay;
    expectRuns(rec, blocks, replay);
  }
  cudaGraphExecDestroy(x);
  cudaGraphDestroy(g);
}

// A captured launch's graph has one executable graph at a time (CUDA
// refuses a second: the graph holds the control block's allocation node);
// two captures run at the same time, each on its own control block.
TEST_F(GpuCapture, ConcurrentReplaysNeverShareAControlBlock) {
  const unsigned blocks = static_cast<unsigned>(sms_) * 32 * 4;
  BlockRecord *rec1 = records(blocks), *rec2 = records(blocks);
  float *out = outputs(blocks);
  cudaStream_t other = nullptr;
  CHECK_CUDA(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));
  cudaGraph_t g1 = nullptr, g2 = nullptr;
  CHECK_CUDA(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeGlobal));
  smpart::KernelHandle h1 =
      smpart_test::launchRecord(dim3(blocks), 64, stream_, rec1, out, 5000);
  CHECK_CUDA(cudaStreamEndCapture(stream_, &g1));
  CHECK_CUDA(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeGlobal));
  smpart::KernelHandle h2 =
      smpart_test::launchRecord(dim3(blocks), 64, stream_, rec2, out, 5000);
  CHECK_CUDA(cudaStreamEndCapture(stream_, &g2));
  ASSERT_TRUE(h1.status().ok() && h2.status().ok());
  cudaGraphExec_t x1 = nullptr, x1b = nullptr, x2 = nullptr;
  CHECK_CUDA(cudaGraphInstantiate(&x1, g1, 0));
  EXPECT_NE(cudaGraphInstantiate(&x1b, g1, 0), cudaSuccess)
      << "a second executable graph would share the control block";
  cudaGetLastError();
  CHECK_CUDA(cudaGraphInstantiate(&x2, g2, 0));
  for (unsigned round = 1; round <= 3; ++round) {
    CHECK_CUDA(cudaGraphLaunch(x1, stream_));
    CHECK_CUDA(cudaGraphLaunch(x2, other));
    ASSERT_TRUE(streamDoneWithin(stream_, 10));
    ASSERT_TRUE(streamDoneWithin(other, 10));
    expectRuns(rec1, blocks, round);
    expectRuns(rec2, blocks, round);
  }
  cudaGraphExecDestroy(x1);
  cudaGraphExecDestroy(x2);
  cudaGraphDestroy(g1);
  cudaGraphDestroy(g2);
  cudaStreamDestroy(other);
}

// deviceInfo() waiting for a probe that cannot run (every SM is held by
// another kernel) neither blocks launches on other threads nor makes up
// SM ids; once the GPU is free the real ids come.
TEST_F(GpuCapture, LaunchDoesNotWaitBehindAProbeThatCannotRun) {
  // The GPU is filled before the runtime's first use, on purpose. Under
  // lazy module loading that first use loads libsmpart's module (and the
  // runtime loads every registered kernel), which may wait for the kernel
  // holding the SMs: a hang of the test, not of what it checks.
  if (const char *m = std::getenv("CUDA_MODULE_LOADING");
      !m || std::string(m) != "EAGER")
    GTEST_SKIP() << "needs CUDA_MODULE_LOADING=EAGER: ctest runs it as "
                    "runtime_gpu_test.probe_cannot_run";
  // Zeroed before the GPU is full: a memset on the legacy stream is not
  // ordered with the kernels of non-blocking streams.
  const unsigned blocks = 1000;
  BlockRecord *rec = records(blocks);
  float *out = outputs(blocks);
  unsigned *gate = nullptr, *dev_gate = nullptr;
  CHECK_CUDA(cudaHostAlloc(reinterpret_cast<void **>(&gate), sizeof(unsigned),
                           cudaHostAllocMapped));
  *gate = 0;
  CHECK_CUDA(
      cudaHostGetDevicePointer(reinterpret_cast<void **>(&dev_gate), gate, 0));
  // Two 1024-thread CTAs per SM: no room for a probe CTA anywhere.
  fillSms<<<2 * sms_, 1024, 0, stream_>>>(dev_gate);
  CHECK_CUDA(cudaGetLastError());
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_TRUE(smpart::init().ok()); // starts the probe
  std::future<smpart::DeviceInfo> info = std::async(std::launch::async, [] {
    smpart::DeviceInfo d;
    EXPECT_TRUE(smpart::deviceInfo(d).ok());
    return d;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  cudaStream_t s2 = nullptr;
  CHECK_CUDA(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  const auto t0 = Clock::now();
  smpart::KernelHandle h =
      smpart_test::launchRecord(dim3(blocks), 64, s2, rec, out, 0);
  const double launch_s =
      std::chrono::duration<double>(Clock::now() - t0).count();
  const smpart::DeviceInfo d = info.get();
  *gate = 1;
  EXPECT_LT(launch_s, 0.5) << "the launch waited for the SM-id probe";
  EXPECT_TRUE(h.status().ok()) << h.status().message();
  EXPECT_FALSE(d.sm_ids_probed);
  EXPECT_TRUE(d.sm_ids.empty()) << "SM ids made up before the probe answered";
  ASSERT_TRUE(streamDoneWithin(stream_, 10));
  ASSERT_TRUE(streamDoneWithin(s2, 10));
  expectRuns(rec, blocks, 1);
  smpart::DeviceInfo later;
  ASSERT_TRUE(smpart::deviceInfo(later).ok());
  EXPECT_TRUE(later.sm_ids_probed);
  EXPECT_EQ(later.sm_ids.size(), static_cast<std::size_t>(sms_));
  cudaStreamDestroy(s2);
  cudaFreeHost(gate);
}

} // namespace
