// GPU tests of libsmpart (label gpu). Each test skips, with the reason,
// when no GPU is usable; none passes silently. Every wait on the GPU has a
// deadline (bounded_wait.hpp): a test that would hang fails instead.
#include "gpu_kernels.cuh"
#include "gpu_test_checks.hpp"
#include "smpart/runtime.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <thread>
#include <vector>

namespace {

using smpart_test::BlockRecord;

class Gpu : public ::testing::Test {
protected:
  void SetUp() override {
    // The runtime's own check: it names the failing call and CUDA's reason.
    if (const smpart::Status st = smpart::init(); !st.ok())
      GTEST_SKIP() << st.message();
    // Below ctest's 45 s: a hang inside a call no helper can bound (the
    // user's own cudaStreamSynchronize under test) still fails with a name.
    watchdog_ = smpart_test::watchCurrentTest();
    // Load the test kernels now. Under lazy module loading (CUDA's default)
    // the first launch of a kernel loads its module, which may wait for the
    // kernels already running: with the gate kernel spinning until the
    // host opens it after that launch, the launch would never return.
    cudaFuncAttributes attr;
    CHECK_CUDA(cudaFuncGetAttributes(&attr, smpart_test::gateKernel));
    CHECK_CUDA(cudaFuncGetAttributes(&attr, smpart_test::recordOriginal));
    CHECK_CUDA(cudaFuncGetAttributes(&attr, smpart_test::recordRewritten));
    CHECK_CUDA(
        cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, 0));
    CHECK_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    CHECK_CUDA(cudaHostAlloc(&gate_, sizeof(unsigned), cudaHostAllocMapped));
    *gate_ = 0;
  }
  void TearDown() override {
    if (stream_)
      cudaStreamDestroy(stream_);
    if (gate_)
      cudaFreeHost(gate_);
    watchdog_.reset();
  }
  void alloc(unsigned blocks, unsigned threads) {
    blocks_ = blocks;
    threads_ = threads;
    ASSERT_EQ(cudaMalloc(&rec_, blocks * sizeof(BlockRecord)), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&out_, blocks * threads * sizeof(float)), cudaSuccess);
    ASSERT_EQ(cudaMemset(rec_, 0, blocks * sizeof(BlockRecord)), cudaSuccess);
    ASSERT_EQ(cudaMemset(out_, 0, blocks * threads * sizeof(float)),
              cudaSuccess);
    // The legacy stream is not ordered with the non-blocking stream_.
    ASSERT_EQ(smpart_test::syncStream(0), cudaSuccess);
  }
  void closeGateLaunch() {
    *gate_ = 0;
    unsigned *dev = nullptr;
    ASSERT_EQ(
        cudaHostGetDevicePointer(reinterpret_cast<void **>(&dev), gate_, 0),
        cudaSuccess);
    smpart_test::gateKernel<<<1, 1, 0, stream_>>>(dev);
  }
  std::vector<BlockRecord> records() {
    std::vector<BlockRecord> r(blocks_);
    EXPECT_EQ(cudaMemcpy(r.data(), rec_, blocks_ * sizeof(BlockRecord),
                         cudaMemcpyDeviceToHost),
              cudaSuccess);
    return r;
  }
  std::vector<float> outputs() {
    std::vector<float> o(blocks_ * threads_);
    EXPECT_EQ(cudaMemcpy(o.data(), out_, o.size() * sizeof(float),
                         cudaMemcpyDeviceToHost),
              cudaSuccess);
    return o;
  }
  void expectEveryBlockOnce() {
    for (const BlockRecord &r : records())
      ASSERT_EQ(r.runs, 1u);
  }
  /// Every block ran once, and those from `after` on (taken later: the
  /// block counter orders takes) ran inside `mask`.
  void expectOnceAndInsideFrom(unsigned long long after,
                               const smpart::SmMask &mask) {
    const std::vector<BlockRecord> recs = records();
    for (unsigned b = 0; b < blocks_; ++b) {
      ASSERT_EQ(recs[b].runs, 1u) << "block " << b;
      if (b >= after)
        ASSERT_TRUE(mask.test(recs[b].smid))
            << "block " << b << " ran on SM " << recs[b].smid;
    }
  }

  int sms_ = 0;
  cudaStream_t stream_ = nullptr;
  unsigned *gate_ = nullptr;
  BlockRecord *rec_ = nullptr;
  float *out_ = nullptr;
  unsigned blocks_ = 0, threads_ = 0;
  std::unique_ptr<smpart_test::Watchdog> watchdog_;
};

TEST_F(Gpu, ResultsEqualOriginal) {
  alloc(20000, 128);
  smpart_test::recordOriginal<<<dim3(200, 100), 128, 0, stream_>>>(rec_, out_,
                                                                   0);
  CHECK_CUDA(smpart_test::syncStream(stream_));
  const std::vector<float> want = outputs();
  CHECK_CUDA(cudaMemset(out_, 0, blocks_ * threads_ * sizeof(float)));
  CHECK_CUDA(cudaMemset(rec_, 0, blocks_ * sizeof(BlockRecord)));
  CHECK_CUDA(smpart_test::syncStream(0));
  smpart::KernelHandle h =
      smpart_test::launchRecord(dim3(200, 100), 128, stream_, rec_, out_, 0);
  CHECK_OK(h.status());
  // Stream semantics: synchronising the user's stream is enough.
  CHECK_CUDA(smpart_test::syncStream(stream_));
  EXPECT_EQ(outputs(), want);
  expectEveryBlockOnce();
  smpart::Progress p;
  CHECK_OK(h.progress(p));
  EXPECT_EQ(p.done, p.total);
  EXPECT_EQ(p.resident_ctas, 0u);
  EXPECT_TRUE(h.lastBlockTaken());
}

// A rewritten kernel whose __launch_bounds__ smpart-transform widened
// (passes/rewrite/LaunchBoundsEdit.h) carries the original's largest
// block: a larger one fails with the error CUDA gives the original.
TEST_F(Gpu, BlockBeyondTheOriginalBoundFailsAsCudaFailsIt) {
  alloc(1, 128);
  smpart_test::boundedOriginal<<<1, 128, 0, stream_>>>(out_);
  const cudaError_t want = cudaGetLastError();
  ASSERT_NE(want, cudaSuccess);
  smpart::KernelHandle h = smpart::launch(
      {"boundedOriginal", nullptr, false, 64}, dim3(1), 128, 0, stream_,
      [](const smpart::LaunchParams &) { ADD_FAILURE() << "launched"; });
  EXPECT_EQ(h.status().cudaError(), static_cast<int>(want))
      << h.status().message() << "; CUDA: " << cudaGetErrorName(want);
}

/// Polls `h` until `pred(progress)` holds or `seconds` pass.
template <class Pred>
bool waitFor(const smpart::KernelHandle &h, Pred pred,
             double seconds = smpart_test::kWaitSeconds) {
  return smpart_test::pollFor(seconds, [&] {
    smpart::Progress p;
    return h.progress(p).ok() && pred(p);
  });
}

/// Waits for `stream` with a deadline, so that a hang fails the test
/// instead of the test run.
bool streamDoneWithin(cudaStream_t stream, double seconds) {
  return smpart_test::syncStream(stream, seconds) == cudaSuccess;
}

smpart::Status waitKernel(smpart::KernelHandle &h) {
  return smpart_test::waitKernel(h);
}

TEST_F(Gpu, PreemptMidRunThenResume) {
  // Long enough to be caught running: ~100 rounds of 20 us blocks.
  const unsigned blocks = static_cast<unsigned>(sms_) * 32 * 100;
  alloc(blocks, 64);
  smpart::KernelHandle h =
      smpart_test::launchRecord(dim3(blocks), 64, stream_, rec_, out_, 20000);
  CHECK_OK(h.status());
  ASSERT_TRUE(waitFor(h, [&](const smpart::Progress &p) {
    return p.taken > blocks / 10;
  })) << "the kernel never got going";
  CHECK_OK(h.preempt());
  CHECK_OK(smpart_test::drainKernel(h));
  smpart::Progress p;
  CHECK_OK(h.progress(p));
  EXPECT_FALSE(p.finished) << "kernel finished before preemption";
  EXPECT_TRUE(p.parked);
  EXPECT_EQ(p.resident_ctas, 0u);
  EXPECT_EQ(waitKernel(h).code(), smpart::Errc::kPreempted);
  // Nothing is taken while preempted.
  const unsigned long long taken = p.taken;
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  CHECK_OK(h.progress(p));
  EXPECT_EQ(p.taken, taken);
  CHECK_OK(h.resume());
  // Under runtime_gpu_test.one_connection the relaunch may queue behind
  // the kernel's own completion event in the one hardware queue; the
  // anchor then runs the ~90 % left alone (after the stall grace), about
  // 8 s of 20 us blocks: the deadline leaves room for that, below the
  // 35 s watchdog.
  CHECK_OK(smpart_test::waitKernel(h, 25));
  CHECK_CUDA(smpart_test::syncStream(stream_));
  expectEveryBlockOnce();
}

TEST_F(Gpu, KnobChangeWhileRunningConfinesBlocksAfterTheAcknowledgement) {
  const unsigned blocks = static_cast<unsigned>(sms_) * 32 * 40;
  alloc(blocks, 64);
  smpart::DeviceInfo info;
  CHECK_OK(smpart::deviceInfo(info));
  smpart::KernelHandle h =
      smpart_test::launchRecord(dim3(blocks), 64, stream_, rec_, out_, 20000);
  ASSERT_TRUE(waitFor(
      h, [&](const smpart::Progress &p) { return p.taken > blocks / 10; }));
  const smpart::SmMask mask = smpart::smSet(info, 0, info.num_sms / 2);
  CHECK_OK(h.setSmMask(mask));
  // Once the device acknowledged the mask, no block is taken outside it:
  // what a controller relies on before it gives the other SMs away.
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (!h.knobsApplied() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::yield();
  ASSERT_TRUE(h.knobsApplied()) << "no acknowledgement within 2 s";
  // The progress mirror is refreshed at every poll (4 us apart at most
  // while CTAs decide); one written after the acknowledgement bounds every
  // block taken before it.
  std::this_thread::sleep_for(std::chrono::milliseconds(1));
  smpart::Progress p;
  CHECK_OK(h.progress(p));
  const unsigned long long after = p.taken;
  CHECK_OK(waitKernel(h));
  expectOnceAndInsideFrom(after, mask);
}

TEST_F(Gpu, GrowAddsCtas) {
  const unsigned blocks = static_cast<unsigned>(sms_) * 32 * 20;
  alloc(blocks, 64);
  closeGateLaunch();
  smpart::KernelHandle h =
      smpart_test::launchRecord(dim3(blocks), 64, stream_, rec_, out_, 20000);
  CHECK_OK(h.setCtasPerSm(1));
  *gate_ = 1;
  ASSERT_TRUE(
      waitFor(h, [&](const smpart::Progress &p) { return p.taken > 0; }));
  const unsigned long long first = h.launchedCtas();
  CHECK_OK(h.setCtasPerSm(std::min(4u, h.occupancy())));
  CHECK_OK(h.grow());
  EXPECT_GT(h.launchedCtas(), first);
  ASSERT_TRUE(waitFor(h, [&](const smpart::Progress &p) {
    return p.finished || p.resident_ctas > static_cast<unsigned>(sms_);
  })) << "grown CTAs never ran";
  CHECK_OK(waitKernel(h));
  expectEveryBlockOnce();
}

TEST_F(Gpu, StalledAllocationIsReportedNotHung) {
  smpart::DeviceInfo info;
  CHECK_OK(smpart::deviceInfo(info));
  ASSERT_GE(info.num_sms, 2u);
  const unsigned blocks = 2000;
  alloc(blocks, 64);
  closeGateLaunch();
  smpart::KernelHandle h =
      smpart_test::launchRecord(dim3(blocks), 64, stream_, rec_, out_, 5000);
  CHECK_OK(h.setSmMask(smpart::smSet(info, 0, 1)));
  CHECK_OK(h.setCtasPerSm(1));
  *gate_ = 1;
  ASSERT_TRUE(
      waitFor(h, [&](const smpart::Progress &p) { return p.taken > 10; }));
  // Move the kernel to another SM without growing it: the CTA on the first
  // SM leaves and, being the last, parks there as the anchor; nothing can
  // run, so after the grace period it runs outside its SMs and says so.
  CHECK_OK(h.setSmMask(smpart::smSet(info, 1, 1)));
  ASSERT_TRUE(streamDoneWithin(stream_, 20)) << "stalled kernel hung";
  smpart::Progress p;
  CHECK_OK(h.progress(p));
  EXPECT_TRUE(p.finished);
  EXPECT_GT(p.stalls, 0u);
  CHECK_OK(waitKernel(h));
  expectEveryBlockOnce();
}

TEST_F(Gpu, UserSyncWhilePreemptedReturnsAfterResumeFromAnotherThread) {
  const unsigned blocks = static_cast<unsigned>(sms_) * 32 * 40;
  alloc(blocks, 64);
  smpart::KernelHandle h =
      smpart_test::launchRecord(dim3(blocks), 64, stream_, rec_, out_, 20000);
  ASSERT_TRUE(
      waitFor(h, [&](const smpart::Progress &p) { return p.taken > 0; }));
  CHECK_OK(h.preempt());
  std::thread resumer([h]() mutable {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    h.resume();
  });
  // The user's own synchronisation blocks while the kernel is preempted
  // and returns once the other thread resumed it. It is the call under
  // test, so it cannot be polled: the fixture's watchdog bounds it.
  const cudaError_t err = cudaStreamSynchronize(stream_);
  resumer.join();
  CHECK_CUDA(err);
  CHECK_OK(waitKernel(h));
  expectEveryBlockOnce();
}

TEST_F(Gpu, ResumeAfterRelaunchQueuedBehindUserWork) {
  // The relaunch of resume() may sit behind the user's later work on a
  // shared hardware queue (CUDA_DEVICE_MAX_CONNECTIONS=1 in the ctest
  // variant of this test): the kernel must finish on its own anyway.
  const unsigned blocks = static_cast<unsigned>(sms_) * 32 * 40;
  alloc(blocks, 64);
  smpart::KernelHandle h =
      smpart_test::launchRecord(dim3(blocks), 64, stream_, rec_, out_, 20000);
  smpart_test::recordOriginal<<<1, 64, 0, stream_>>>(rec_, out_,
                                                     0); // user work after it
  ASSERT_TRUE(
      waitFor(h, [&](const smpart::Progress &p) { return p.taken > 0; }));
  CHECK_OK(h.preempt());
  CHECK_OK(smpart_test::drainKernel(h));
  CHECK_OK(h.resume());
  ASSERT_TRUE(streamDoneWithin(stream_, 20))
      << "hang: completion depended on later work";
  const std::vector<BlockRecord> recs = records();
  for (unsigned b = 1; b < blocks; ++b)
    ASSERT_EQ(recs[b].runs, 1u) << "block " << b;
  EXPECT_EQ(recs[0].runs, 2u); // once by the kernel, once by the user's work
}

TEST_F(Gpu, LastBlockCallbackMayLaunch) {
  // The callback runs on the notice thread with no runtime lock held: a
  // launch from it (what a controller does on the early notification)
  // neither deadlocks nor terminates.
  const unsigned blocks = 3000;
  alloc(blocks, 64);
  BlockRecord *rec2 = nullptr;
  float *out2 = nullptr;
  CHECK_CUDA(cudaMalloc(&rec2, blocks * sizeof(BlockRecord)));
  CHECK_CUDA(cudaMalloc(&out2, blocks * 64 * sizeof(float)));
  CHECK_CUDA(cudaMemset(rec2, 0, blocks * sizeof(BlockRecord)));
  CHECK_CUDA(smpart_test::syncStream(0)); // legacy stream vs stream_
  smpart::KernelHandle second;
  std::atomic<bool> called{false};
  smpart::KernelHandle h =
      smpart_test::launchRecord(dim3(blocks), 64, stream_, rec_, out_, 2000);
  CHECK_OK(h.onLastBlockTaken([&] {
    second =
        smpart_test::launchRecord(dim3(blocks), 64, stream_, rec2, out2, 0);
    called = true;
  }));
  CHECK_OK(waitKernel(h));
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!called && std::chrono::steady_clock::now() < end)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_TRUE(called);
  h = smpart::KernelHandle(); // dropping the last handle must not join anything
  CHECK_OK(waitKernel(second));
  expectEveryBlockOnce();
  std::vector<BlockRecord> r2(blocks);
  CHECK_CUDA(cudaMemcpy(r2.data(), rec2, blocks * sizeof(BlockRecord),
                        cudaMemcpyDeviceToHost));
  for (const BlockRecord &r : r2)
    ASSERT_EQ(r.runs, 1u);
  cudaFree(rec2);
  cudaFree(out2);
}

TEST_F(Gpu, LaunchesWorkAfterDeviceReset) {
  alloc(1000, 64);
  smpart::KernelHandle before =
      smpart_test::launchRecord(dim3(1000), 64, stream_, rec_, out_, 0);
  CHECK_OK(waitKernel(before));
  cudaStreamDestroy(stream_);
  stream_ = nullptr;
  CHECK_CUDA(cudaDeviceReset());
  gate_ = nullptr; // freed by the reset
  rec_ = nullptr;
  out_ = nullptr;
  alloc(1000, 64);
  smpart::KernelHandle after =
      smpart_test::launchRecord(dim3(1000), 64, nullptr, rec_, out_, 0);
  CHECK_OK(after.status());
  CHECK_OK(waitKernel(after));
  expectEveryBlockOnce();
  // The launch found the reset: handles from before say so, and nothing of
  // theirs (freed with the context) is touched.
  EXPECT_EQ(before.status().code(), smpart::Errc::kDeviceReset);
  smpart::Progress p;
  EXPECT_EQ(before.progress(p).code(), smpart::Errc::kDeviceReset);
}

TEST_F(Gpu, GraphCaptureReplaysFromAFreshCounter) {
  const unsigned blocks = 5000;
  alloc(blocks, 64);
  cudaGraph_t graph = nullptr;
  CHECK_CUDA(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeGlobal));
  smpart::KernelHandle h =
      smpart_test::launchRecord(dim3(blocks), 64, stream_, rec_, out_, 0);
  CHECK_CUDA(cudaStreamEndCapture(stream_, &graph));
  CHECK_OK(h.status());
  EXPECT_TRUE(h.captured());
  cudaGraphExec_t exec = nullptr;
  CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  for (int replay = 1; replay <= 3; ++replay) {
    CHECK_CUDA(cudaGraphLaunch(exec, stream_));
    ASSERT_TRUE(streamDoneWithin(stream_, 10));
    for (const BlockRecord &r : records())
      ASSERT_EQ(r.runs, static_cast<unsigned>(replay)) << "replay " << replay;
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
}

TEST_F(Gpu, PerThreadDefaultStream) {
  alloc(3000, 64);
  // Built with --default-stream per-thread: stream 0 there is the thread's
  // stream, which can be captured; the legacy stream cannot.
  CHECK_CUDA(
      smpart_test::launchOnPerThreadDefaultStreamCaptured(rec_, out_, 3000));
  for (const BlockRecord &r : records())
    ASSERT_EQ(r.runs, 1u);
}

TEST_F(Gpu, SmMaskRespected) {
  alloc(3000, 64);
  closeGateLaunch();
  smpart::KernelHandle h =
      smpart_test::launchRecord(dim3(3000), 64, stream_, rec_, out_, 5000);
  CHECK_OK(h.status());
  // Masks name %smid values, which need not be 0..sms-1: every other id
  // the probe found.
  smpart::DeviceInfo info;
  ASSERT_TRUE(smpart_test::pollFor(smpart_test::kWaitSeconds, [&] {
    return smpart::deviceInfo(info).ok() && info.sm_ids_probed;
  })) << "the SM-id probe never answered";
  smpart::SmMask mask;
  for (std::size_t i = 0; i < info.sm_ids.size(); i += 2)
    mask.set(info.sm_ids[i]);
  CHECK_OK(h.setSmMask(mask));
  *gate_ = 1;
  CHECK_OK(waitKernel(h));
  std::set<unsigned> used;
  for (const BlockRecord &r : records()) {
    ASSERT_EQ(r.runs, 1u);
    ASSERT_TRUE(mask.test(r.smid)) << "block ran on SM " << r.smid;
    used.insert(r.smid);
  }
  EXPECT_GT(used.size(), 1u);
}

TEST_F(Gpu, CtasPerSmAndBypassTagCounts) {
  alloc(6000, 64);
  closeGateLaunch();
  smpart::KernelHandle h =
      smpart_test::launchRecord(dim3(6000), 64, stream_, rec_, out_, 5000);
  CHECK_OK(h.status());
  ASSERT_GE(h.occupancy(), 4u);
  CHECK_OK(h.setCtasPerSm(4));
  CHECK_OK(h.setBypassCtasPerSm(1));
  *gate_ = 1;
  CHECK_OK(waitKernel(h));
  // Before the grid runs out no CTA leaves, so per SM: at most 4 CTAs, and
  // exactly one of them tagged.
  std::map<unsigned, std::set<unsigned>> ctas, tagged;
  const std::vector<BlockRecord> recs = records();
  for (unsigned b = 0; b < blocks_ / 2; ++b) {
    ctas[recs[b].smid].insert(recs[b].cta);
    if (recs[b].bypass)
      tagged[recs[b].smid].insert(recs[b].cta);
  }
  for (const auto &[sm, set] : ctas) {
    EXPECT_LE(set.size(), 4u) << "SM " << sm;
    EXPECT_EQ(tagged[sm].size(), 1u) << "SM " << sm;
  }
  expectEveryBlockOnce();
}

TEST_F(Gpu, OpaqueKernelMixesWithTransformed) {
  alloc(1000, 64);
  smpart::KernelHandle h = smpart::launchOpaque(
      {"recordOriginal",
       reinterpret_cast<const void *>(&smpart_test::recordOriginal)},
      dim3(1000), dim3(64), 0, stream_,
      [this](dim3 g, dim3 b, std::size_t smem, cudaStream_t s) {
        smpart_test::recordOriginal<<<g, b, smem, s>>>(rec_, out_, 0);
      });
  CHECK_OK(h.status());
  EXPECT_EQ(h.preempt().code(), smpart::Errc::kNotSupported);
  CHECK_OK(waitKernel(h));
  expectEveryBlockOnce();
}

} // namespace
