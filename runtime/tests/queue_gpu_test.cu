// GPU tests (label gpu, part of runtime_gpu_test) of the two queue rules of
// runtime/README.md, "Why a launch cannot hang": a grow()/resume()
// relaunch does not wait behind unrelated work that waits on the host, and
// under CUDA's default lazy module loading a kernel launched while another
// is preempted was loaded beforehand (the runtime's preload), so its launch
// does not wait for the preempted kernel's anchor. Each test skips without
// a GPU, and every wait has a deadline: a broken rule fails, it never hangs.
#include "gpu_kernels.cuh"
#include "gpu_test_checks.hpp"
#include "smpart/runtime.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

using smpart_test::BlockRecord;

/// The "unrelated kernel": marks that it ran.
__global__ void markRan(volatile unsigned *ran) { *ran = 1; }

/// A transformed kernel that nothing in this process launches or loads
/// before GpuQueue.LaunchWhilePreemptedUnderLazyLoading does: the same body
/// as recordRewritten, under a name of its own.
static __global__ void lazyRecordRewritten(smpart::LaunchControl smpart_ctl,
                                           BlockRecord *rec, float *out) {
  for (smpart::detail::Cta smpart_cta(smpart_ctl); smpart_cta.next();) {
    const uint3 blockIdx = smpart_cta.blockIdx();
    {
      const unsigned b = blockIdx.x;
      out[b * blockDim.x + threadIdx.x] = b * 2.0f + threadIdx.x;
      if (threadIdx.x != 0)
        goto smpart_next_block;
      atomicAdd(&rec[b].runs, 1u);
    }
  smpart_next_block:;
  }
}

// What smpart-transform emits for every kernel of a rewritten translation
// unit (lit_tests/transform/preload-registration.cu): hand-written test
// kernels are not registered otherwise, and this one must be preloaded by
// the runtime, not by the test.
static const bool lazy_record_registered = smpart::detail::registerKernel(
    reinterpret_cast<const void *>(&lazyRecordRewritten),
    "lazyRecordRewritten");

smpart::KernelHandle launchLazyRecord(unsigned blocks, cudaStream_t s,
                                      BlockRecord *rec, float *out) {
  return smpart::launch(
      {"lazyRecordRewritten",
       reinterpret_cast<const void *>(&lazyRecordRewritten)},
      dim3(blocks), dim3(64), 0, s,
      [args = std::make_tuple(rec, out)](const smpart::LaunchParams &p) {
        std::apply(
            [&](const auto &...a) {
              lazyRecordRewritten<<<p.grid, p.block, p.smem, p.stream>>>(p.ctl,
                                                                         a...);
            },
            args);
      });
}

class GpuQueue : public ::testing::Test {
protected:
  void SetUp() override {
    if (const smpart::Status st = smpart::init(); !st.ok())
      GTEST_SKIP() << st.message();
    watchdog_ = smpart_test::watchCurrentTest();
    ASSERT_TRUE(lazy_record_registered);
    // The kernels this file launches itself with <<<>>> (not through the
    // runtime) are loaded before anything can spin; lazyRecordRewritten
    // deliberately is not.
    cudaFuncAttributes attr;
    CHECK_CUDA(cudaFuncGetAttributes(&attr, smpart_test::gateKernel));
    CHECK_CUDA(cudaFuncGetAttributes(&attr, markRan));
    CHECK_CUDA(cudaFuncGetAttributes(&attr, smpart_test::recordRewritten));
    CHECK_CUDA(
        cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, 0));
    for (cudaStream_t *s : {&a_, &b_, &gate_stream_})
      CHECK_CUDA(cudaStreamCreateWithFlags(s, cudaStreamNonBlocking));
    CHECK_CUDA(
        cudaHostAlloc(&flags_, 4 * sizeof(unsigned), cudaHostAllocMapped));
    for (int i = 0; i < 4; ++i)
      flags_[i] = 0;
    CHECK_CUDA(cudaHostGetDevicePointer(reinterpret_cast<void **>(&dev_flags_),
                                        flags_, 0));
  }
  void TearDown() override {
    // Whatever a failed check left closed is opened, so that nothing of
    // this test still waits when the next one starts.
    if (flags_)
      flags_[kGate] = flags_[kStartGate] = 1;
    for (cudaStream_t s : {a_, b_, gate_stream_})
      if (s) {
        smpart_test::syncStream(s, 5);
        cudaStreamDestroy(s);
      }
    if (ev_)
      cudaEventDestroy(ev_);
    for (void *p : allocs_)
      cudaFree(p);
    if (flags_)
      cudaFreeHost(flags_);
    watchdog_.reset();
  }
  template <class T> T *deviceArray(std::size_t n) {
    T *p = nullptr;
    EXPECT_EQ(cudaMalloc(&p, n * sizeof(T)), cudaSuccess);
    EXPECT_EQ(cudaMemset(p, 0, n * sizeof(T)), cudaSuccess);
    // The legacy stream is not ordered with the non-blocking streams.
    EXPECT_EQ(smpart_test::syncStream(0), cudaSuccess);
    allocs_.push_back(p);
    return p;
  }
  /// B, queued on its own user stream behind an event that the gate
  /// kernel's stream records only once the host opens the gate; the same
  /// wait is also queued on A's stream, as the user's later work.
  void queueBlockedB() {
    CHECK_CUDA(cudaEventCreateWithFlags(&ev_, cudaEventDisableTiming));
    smpart_test::gateKernel<<<1, 1, 0, gate_stream_>>>(dev_flags_ + kGate);
    CHECK_CUDA(cudaEventRecord(ev_, gate_stream_));
    CHECK_CUDA(cudaStreamWaitEvent(b_, ev_, 0));
    markRan<<<1, 1, 0, b_>>>(dev_flags_ + kBRan);
    CHECK_CUDA(cudaStreamWaitEvent(a_, ev_, 0));
    markRan<<<1, 1, 0, a_>>>(dev_flags_ + kAfterARan);
    CHECK_CUDA(cudaGetLastError());
  }
  /// A finishes within the deadline with relaunched CTAs (more resident
  /// than `without_relaunch` could be) while B still waits; then B runs.
  void expectRelaunchRanWhileBWaits(smpart::KernelHandle &h,
                                    unsigned without_relaunch, BlockRecord *rec,
                                    unsigned blocks) {
    bool grew = false;
    const bool done = smpart_test::pollFor(smpart_test::kWaitSeconds, [&] {
      smpart::Progress p;
      if (!h.progress(p).ok())
        return true;
      grew = grew || p.resident_ctas > without_relaunch;
      return p.finished;
    });
    ASSERT_TRUE(done)
        << smpart_test::timedOut(h, "A", smpart_test::kWaitSeconds).message();
    EXPECT_TRUE(grew) << "no relaunched CTA of A ran: the relaunch waited "
                         "behind B";
    EXPECT_EQ(flags_[kBRan], 0u) << "B ran before its event";
    EXPECT_EQ(flags_[kAfterARan], 0u);
    CHECK_OK(smpart_test::waitKernel(h));
    flags_[kGate] = 1; // the event is recorded now: B may run
    CHECK_CUDA(smpart_test::syncStreams({gate_stream_, b_, a_}));
    EXPECT_EQ(flags_[kBRan], 1u);
    EXPECT_EQ(flags_[kAfterARan], 1u);
    std::vector<BlockRecord> r(blocks);
    CHECK_CUDA(cudaMemcpy(r.data(), rec, blocks * sizeof(BlockRecord),
                          cudaMemcpyDeviceToHost));
    for (unsigned b = 0; b < blocks; ++b)
      ASSERT_EQ(r[b].runs, 1u) << "block " << b;
  }

  enum : unsigned { kGate = 0, kBRan = 1, kAfterARan = 2, kStartGate = 3 };
  int sms_ = 0;
  cudaStream_t a_ = nullptr, b_ = nullptr, gate_stream_ = nullptr;
  cudaEvent_t ev_ = nullptr;
  unsigned *flags_ = nullptr, *dev_flags_ = nullptr;
  std::vector<void *> allocs_;
  std::unique_ptr<smpart_test::Watchdog> watchdog_;
};

TEST_F(GpuQueue, GrowIsNotBlockedBehindAKernelWaitingOnAnEvent) {
  const unsigned blocks = static_cast<unsigned>(sms_) * 32 * 20;
  BlockRecord *rec = deviceArray<BlockRecord>(blocks);
  float *out = deviceArray<float>(std::size_t(blocks) * 64);
  // A starts with one CTA per SM, so only grow()'s relaunch can add more.
  smpart_test::gateKernel<<<1, 1, 0, a_>>>(dev_flags_ + kStartGate);
  smpart::KernelHandle h =
      smpart_test::launchRecord(dim3(blocks), 64, a_, rec, out, 20000);
  CHECK_OK(h.status());
  CHECK_OK(h.setCtasPerSm(1));
  flags_[kStartGate] = 1;
  ASSERT_TRUE(smpart_test::pollFor(smpart_test::kWaitSeconds, [&] {
    smpart::Progress p;
    return h.progress(p).ok() && p.taken > 0 &&
           p.resident_ctas <= static_cast<unsigned>(sms_);
  })) << smpart_test::timedOut(h, "start", smpart_test::kWaitSeconds).message();
  // Every CTA of the first instance has decided by now (they all fit at
  // once), so none of them can take a slot that the raise below allows.
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  queueBlockedB();
  ASSERT_GE(h.occupancy(), 2u);
  CHECK_OK(h.setCtasPerSm(h.occupancy()));
  CHECK_OK(h.grow());
  expectRelaunchRanWhileBWaits(h, static_cast<unsigned>(sms_), rec, blocks);
}

TEST_F(GpuQueue, ResumeIsNotBlockedBehindAKernelWaitingOnAnEvent) {
  const unsigned blocks = static_cast<unsigned>(sms_) * 32 * 40;
  BlockRecord *rec = deviceArray<BlockRecord>(blocks);
  float *out = deviceArray<float>(std::size_t(blocks) * 64);
  // 200 us blocks, ~8 ms of work: most of it is left when the preemption
  // lands, after the host calls below, so the resume has blocks to relaunch.
  smpart::KernelHandle h =
      smpart_test::launchRecord(dim3(blocks), 64, a_, rec, out, 200000);
  CHECK_OK(h.status());
  ASSERT_TRUE(smpart_test::pollFor(smpart_test::kWaitSeconds, [&] {
    smpart::Progress p;
    return h.progress(p).ok() && p.taken > 0;
  })) << smpart_test::timedOut(h, "start", smpart_test::kWaitSeconds).message();
  queueBlockedB();
  CHECK_OK(h.preempt());
  CHECK_OK(smpart_test::drainKernel(h));
  CHECK_OK(h.resume());
  // Preempted, only the anchor is left: more than one resident CTA after
  // the resume means the relaunch ran.
  expectRelaunchRanWhileBWaits(h, 1, rec, blocks);
}

TEST_F(GpuQueue, LaunchWhilePreemptedUnderLazyLoading) {
  // Run under CUDA's default module loading (ctest sets nothing): the
  // point is that lazyRecordRewritten was loaded by the runtime's preload
  // at the first transformed launch, since a load now could wait for A.
  const unsigned blocks_a = static_cast<unsigned>(sms_) * 32 * 40;
  const unsigned blocks_b = 4000;
  BlockRecord *rec_a = deviceArray<BlockRecord>(blocks_a);
  float *out_a = deviceArray<float>(std::size_t(blocks_a) * 64);
  BlockRecord *rec_b = deviceArray<BlockRecord>(blocks_b);
  float *out_b = deviceArray<float>(std::size_t(blocks_b) * 64);
  CHECK_CUDA(
      smpart_test::syncStream(0)); // the memsets: B must not wait for them
  smpart::KernelHandle a =
      smpart_test::launchRecord(dim3(blocks_a), 64, a_, rec_a, out_a, 20000);
  CHECK_OK(a.status());
  ASSERT_TRUE(smpart_test::pollFor(smpart_test::kWaitSeconds, [&] {
    smpart::Progress p;
    return a.progress(p).ok() && p.taken > blocks_a / 10;
  })) << smpart_test::timedOut(a, "start", smpart_test::kWaitSeconds).message();
  CHECK_OK(a.preempt());
  CHECK_OK(smpart_test::drainKernel(a));
  // B's launch on another thread: if it had to load B it would wait for
  // A's parked anchor, which only a resume releases. After the deadline
  // the test resumes A itself (so the thread returns) and fails.
  std::atomic<bool> launched{false};
  smpart::KernelHandle b;
  std::thread launcher([&] {
    b = launchLazyRecord(blocks_b, b_, rec_b, out_b);
    launched = true;
  });
  const bool returned = smpart_test::pollFor(smpart_test::kWaitSeconds,
                                             [&] { return launched.load(); });
  if (!returned)
    a.resume();
  launcher.join();
  ASSERT_TRUE(returned) << "B's launch waited for the preempted A: B was not "
                           "loaded before A ran (lazy loading)";
  CHECK_OK(b.status());
  smpart::Progress p;
  CHECK_OK(a.progress(p));
  const unsigned long long taken = p.taken;
  CHECK_OK(smpart_test::waitKernel(b));
  CHECK_CUDA(smpart_test::syncStream(b_));
  CHECK_OK(a.progress(p));
  EXPECT_EQ(p.taken, taken) << "A took blocks while preempted";
  EXPECT_FALSE(p.finished);
  CHECK_OK(a.resume());
  CHECK_OK(smpart_test::waitKernel(a));
  CHECK_CUDA(smpart_test::syncStream(a_));
  for (auto [rec, n] :
       {std::make_pair(rec_a, blocks_a), std::make_pair(rec_b, blocks_b)}) {
    std::vector<BlockRecord> r(n);
    CHECK_CUDA(cudaMemcpy(r.data(), rec, n * sizeof(BlockRecord),
                          cudaMemcpyDeviceToHost));
    for (unsigned i = 0; i < n; ++i)
      ASSERT_EQ(r[i].runs, 1u) << "block " << i;
  }
}

} // namespace
