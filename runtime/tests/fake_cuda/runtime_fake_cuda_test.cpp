// libsmpart's host runtime against the CUDA stand-in of fake_cuda.hpp: what
// the runtime asks of CUDA around stream capture, graphs and the SM-id
// probe, checked without a GPU. The fake refuses what CUDA refuses (unsafe
// calls and legacy-stream work during capture, a second executable graph
// of a graph with allocation nodes) and its kernels check the control
// block they are given: every run must start from a clean one that no
// other running kernel uses.
#include "fake_cuda.hpp"
#include "kernel.hpp"

#include "smpart/controller_runtime.hpp"
#include "smpart/policy/policy.hpp"
#include "smpart/runtime.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <future>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

/// The address the fake knows the test kernel by.
void testKernel() {}

/// What the test kernel saw, over every run.
struct Monitor {
  std::mutex mu;
  std::vector<std::string> errors;
  std::set<const void *> busy; // State and Notices of running kernels
  std::atomic<bool> hold{false};
  std::atomic<unsigned> started{0}, finished{0};
  bool expect_graph_state = false;
  /// The run's finish also sets Notices::last_block_taken, as the CTA that
  /// took the last block does before the anchor ends the launch.
  bool note_last_block = false;

  void error(std::string e) {
    std::lock_guard<std::mutex> lock(mu);
    errors.push_back(std::move(e));
  }
  std::vector<std::string> errorsSoFar() {
    std::lock_guard<std::mutex> lock(mu);
    return errors;
  }
};

fake_cuda::KernelRun runOf(Monitor &m, const smpart::LaunchControl ctl,
                           unsigned ctas) {
  fake_cuda::KernelRun r;
  r.start = [&m, ctl, ctas] {
    smpart::State &s = *ctl.state;
    volatile smpart::Notices &n = *ctl.notices;
    if (m.expect_graph_state && !fake_cuda::allocationLive(ctl.state))
      m.error("the State is not a live graph allocation");
    // The first CTA initialises the header (the launch handshake): it
    // must find a State left from an older launch, or a zero one.
    if ((s.handshake >> 1) >= ctl.generation || ctl.first_ctas != ctas)
      m.error("the State is not left from an older launch");
    for (unsigned s_id = 0; s_id < smpart::kMaxSms; ++s_id)
      if (s.sm_slots[s_id] != 0 || s.sm_tickets[s_id] != 0) {
        m.error("the State's slot words or slot tickets are not zero");
        break;
      }
    smpart::Notices clean{};
    smpart::Notices now;
    std::memcpy(&now, const_cast<const smpart::Notices *>(&n), sizeof now);
    if (std::memcmp(&now, &clean, sizeof now) != 0)
      m.error("the Notices were not reset (finished = " +
              std::to_string(now.finished) + ")");
    {
      std::lock_guard<std::mutex> lock(m.mu);
      if (m.busy.count(ctl.state) ||
          m.busy.count(const_cast<smpart::Notices *>(&n)))
        m.errors.push_back("two running kernels share a State or Notices");
      m.busy.insert(ctl.state);
      m.busy.insert(const_cast<smpart::Notices *>(&n));
    }
    n.started = 1;
    s.handshake = (static_cast<unsigned long long>(ctl.generation) << 1) | 1u;
    s.first_live = ctl.first_ctas;
    s.next_block = 3; // what running CTAs leave behind
    ++m.started;
  };
  r.held = [&m] { return m.hold.load(); };
  r.finish = [&m, ctl] {
    smpart::State &s = *ctl.state;
    volatile smpart::Notices &n = *ctl.notices;
    s.next_block = s.blocks_done = ctl.total_blocks;
    if (m.note_last_block)
      n.last_block_taken = 1;
    // As the anchor ends a launch (Protocol::finish): `finished` alone. The
    // progress mirror keeps what the last poll wrote, and the CTA that took
    // the last block may not have set last_block_taken yet.
    n.finished = ctl.generation;
    {
      std::lock_guard<std::mutex> lock(m.mu);
      m.busy.erase(ctl.state);
      m.busy.erase(const_cast<smpart::Notices *>(&n));
    }
    ++m.finished;
  };
  return r;
}

class FakeRuntime : public ::testing::Test {
protected:
  void SetUp() override { fresh(); }

  /// A new device: the runtime finds its old context gone (as after
  /// cudaDeviceReset) and builds a new one, pool and probe included, at
  /// its next call.
  void fresh(bool memory_pools = true) {
    fake_cuda::reset(4, memory_pools);
    {
      std::lock_guard<std::mutex> lock(monitor_.mu);
      monitor_.errors.clear();
      monitor_.busy.clear();
    }
    monitor_.started = monitor_.finished = 0;
    monitor_.hold = false;
    monitor_.expect_graph_state = false;
    monitor_.note_last_block = false;
    fake_cuda::setProbeRuns({{3, 40, 77, 300}});
    fake_cuda::registerKernel(
        reinterpret_cast<const void *>(&testKernel),
        [this](void **args, dim3 grid, dim3) {
          return runOf(monitor_, *static_cast<smpart::LaunchControl *>(args[0]),
                       grid.x);
        });
    ASSERT_EQ(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking),
              cudaSuccess);
  }

  smpart::KernelHandle launch(cudaStream_t s, unsigned blocks = 100) {
    return smpart::launch({"testKernel", nullptr}, dim3(blocks), dim3(64), 0, s,
                          [](const smpart::LaunchParams &p) {
                            smpart::LaunchControl ctl = p.ctl;
                            void *args[] = {&ctl};
                            cudaLaunchKernel(
                                reinterpret_cast<const void *>(&testKernel),
                                p.grid, p.block, args, p.smem, p.stream);
                          });
  }

  /// Captures one launch on `s` into a new graph; `handle`, if given,
  /// receives the launch's handle.
  cudaGraph_t capture(cudaStream_t s,
                      cudaStreamCaptureMode mode = cudaStreamCaptureModeGlobal,
                      smpart::KernelHandle *handle = nullptr) {
    cudaGraph_t g = nullptr;
    EXPECT_EQ(cudaStreamBeginCapture(s, mode), cudaSuccess);
    smpart::KernelHandle h = launch(s);
    EXPECT_TRUE(h.status().ok()) << h.status().message();
    EXPECT_TRUE(h.captured());
    EXPECT_EQ(cudaStreamEndCapture(s, &g), cudaSuccess)
        << "the launch invalidated the capture";
    if (handle)
      *handle = h;
    return g;
  }

  /// Captures one launch, replays it three times; every replay must find
  /// a clean control block (the monitor checks each start).
  void replayThreeTimes() {
    cudaGraph_t g = capture(stream_);
    ASSERT_NE(g, nullptr);
    cudaGraphExec_t x = nullptr;
    ASSERT_EQ(cudaGraphInstantiate(&x, g, 0), cudaSuccess);
    for (int replay = 0; replay < 3; ++replay)
      ASSERT_EQ(cudaGraphLaunch(x, stream_), cudaSuccess);
    EXPECT_EQ(monitor_.finished.load(), 3u);
    EXPECT_TRUE(monitor_.errorsSoFar().empty()) << monitor_.errorsSoFar()[0];
    cudaGraphExecDestroy(x);
    cudaGraphDestroy(g);
  }

  Monitor monitor_;
  cudaStream_t stream_ = nullptr;
};

// The stand-in's captures fork and join as CUDA's do, so that a test of
// work forked into a capture can fail: a stream waiting for a captured
// event joins the capture and leaves it with the origin; work of a fork
// the origin never waited for, directly or through another stream, fails
// the capture; a capturing stream may not wait for work outside its
// capture, nor be queried.
TEST(FakeCapture, ForksJoinAndIsolateLikeCuda) {
  fake_cuda::reset();
  cudaStream_t origin = nullptr, fork = nullptr, outside = nullptr;
  cudaEvent_t e = nullptr;
  for (cudaStream_t *s : {&origin, &fork, &outside})
    ASSERT_EQ(cudaStreamCreateWithFlags(s, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), cudaSuccess);
  auto forkWork = [&] {
    EXPECT_EQ(cudaEventRecord(e, origin), cudaSuccess);
    EXPECT_EQ(cudaStreamWaitEvent(fork, e, 0), cudaSuccess);
    cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    EXPECT_EQ(cudaStreamIsCapturing(fork, &cs), cudaSuccess);
    EXPECT_EQ(cs, cudaStreamCaptureStatusActive);
    EXPECT_EQ(cudaMemsetAsync(nullptr, 0, 0, fork), cudaSuccess);
  };
  cudaGraph_t g = nullptr;
  // Joined: the origin waits for the fork's last work.
  ASSERT_EQ(cudaStreamBeginCapture(origin, cudaStreamCaptureModeThreadLocal),
            cudaSuccess);
  forkWork();
  EXPECT_EQ(cudaStreamEndCapture(fork, &g), cudaErrorStreamCaptureUnmatched);
  ASSERT_EQ(cudaEventRecord(e, fork), cudaSuccess);
  ASSERT_EQ(cudaStreamWaitEvent(origin, e, 0), cudaSuccess);
  ASSERT_EQ(cudaStreamEndCapture(origin, &g), cudaSuccess);
  cudaStreamCaptureStatus cs = cudaStreamCaptureStatusActive;
  ASSERT_EQ(cudaStreamIsCapturing(fork, &cs), cudaSuccess);
  EXPECT_EQ(cs, cudaStreamCaptureStatusNone);
  // Not joined.
  ASSERT_EQ(cudaStreamBeginCapture(origin, cudaStreamCaptureModeThreadLocal),
            cudaSuccess);
  forkWork();
  EXPECT_EQ(cudaStreamEndCapture(origin, &g), cudaErrorStreamCaptureUnjoined);
  // Joined through another stream: the origin waits for a stream that
  // waited for the fork's last work.
  ASSERT_EQ(cudaStreamBeginCapture(origin, cudaStreamCaptureModeThreadLocal),
            cudaSuccess);
  forkWork();
  ASSERT_EQ(cudaEventRecord(e, fork), cudaSuccess);
  ASSERT_EQ(cudaStreamWaitEvent(outside, e, 0), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(e, outside), cudaSuccess);
  ASSERT_EQ(cudaStreamWaitEvent(origin, e, 0), cudaSuccess);
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  ASSERT_EQ(cudaThreadExchangeStreamCaptureMode(&mode), cudaSuccess);
  EXPECT_EQ(cudaEventQuery(e), cudaErrorCapturedEvent); // even relaxed
  ASSERT_EQ(cudaThreadExchangeStreamCaptureMode(&mode), cudaSuccess);
  ASSERT_EQ(cudaStreamEndCapture(origin, &g), cudaSuccess);
  // A query of a capturing stream ends its capture, in any mode.
  ASSERT_EQ(cudaStreamBeginCapture(origin, cudaStreamCaptureModeRelaxed),
            cudaSuccess);
  EXPECT_EQ(cudaStreamQuery(origin), cudaErrorStreamCaptureUnsupported);
  EXPECT_EQ(cudaStreamEndCapture(origin, &g),
            cudaErrorStreamCaptureInvalidated);
  // Waiting for work outside the capture.
  ASSERT_EQ(cudaEventRecord(e, outside), cudaSuccess);
  ASSERT_EQ(cudaStreamBeginCapture(origin, cudaStreamCaptureModeThreadLocal),
            cudaSuccess);
  EXPECT_EQ(cudaStreamWaitEvent(origin, e, 0), cudaErrorStreamCaptureIsolation);
  EXPECT_EQ(cudaStreamEndCapture(origin, &g),
            cudaErrorStreamCaptureInvalidated);
}

// A launch the runtime refuses before enqueueing anything (an empty grid)
// reaches CUDA's last error as the <<<>>> it replaced would: the closure
// makes the original launch, which CUDA refuses the same way.
TEST_F(FakeRuntime, RefusedLaunchReportsToCudaLikeItsLaunch) {
  unsigned original_launches = 0;
  smpart::KernelHandle h = smpart::launch(
      {"testKernel", nullptr, true}, dim3(0, 4), dim3(64), 0, stream_,
      [&](const smpart::LaunchParams &p) {
        if (!p.original)
          return;
        ++original_launches;
        cudaLaunchKernel(reinterpret_cast<const void *>(&testKernel), p.grid,
                         p.block, nullptr, p.smem, p.stream);
      });
  EXPECT_EQ(h.status().code(), smpart::Errc::kInvalidArgument);
  EXPECT_EQ(original_launches, 1u);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidConfiguration);
  EXPECT_EQ(smpart::getLastError().code(), smpart::Errc::kInvalidArgument);
  EXPECT_EQ(monitor_.started.load(), 0u);
}

// (3) The first launch of a process allocates the control-block pool. Under
// capture of a blocking stream (here the per-thread default stream) that
// must not touch the legacy stream or make a call the capture mode forbids.
TEST_F(FakeRuntime, FirstLaunchInsideCaptureIsLegalInEveryMode) {
  for (cudaStreamCaptureMode mode :
       {cudaStreamCaptureModeGlobal, cudaStreamCaptureModeThreadLocal,
        cudaStreamCaptureModeRelaxed}) {
    SCOPED_TRACE("capture mode " + std::to_string(mode));
    fresh();
    monitor_.expect_graph_state = true;
    cudaGraph_t g = capture(cudaStreamPerThread, mode);
    ASSERT_NE(g, nullptr);
    cudaGraphExec_t x = nullptr;
    ASSERT_EQ(cudaGraphInstantiate(&x, g, 0), cudaSuccess);
    ASSERT_EQ(cudaGraphLaunch(x, stream_), cudaSuccess);
    EXPECT_EQ(monitor_.finished.load(), 1u);
    EXPECT_TRUE(monitor_.errorsSoFar().empty()) << monitor_.errorsSoFar()[0];
    cudaGraphExecDestroy(x);
    cudaGraphDestroy(g);
  }
}

/// Another thread captures a blocking stream in global mode (CUDA's
/// default, the strictest) from construction until end(), which returns
/// the capture's outcome.
class CaptureOnAnotherThread {
public:
  CaptureOnAnotherThread() {
    EXPECT_EQ(cudaStreamCreateWithFlags(&stream_, cudaStreamDefault),
              cudaSuccess);
    std::promise<void> begun;
    ended_ = std::async(std::launch::async, [this, &begun] {
      cudaStreamBeginCapture(stream_, cudaStreamCaptureModeGlobal);
      begun.set_value();
      release_.get_future().wait();
      cudaGraph_t g = nullptr;
      const cudaError_t e = cudaStreamEndCapture(stream_, &g);
      if (g)
        cudaGraphDestroy(g);
      return e;
    });
    begun.get_future().wait();
  }
  cudaError_t end() {
    release_.set_value();
    return ended_.get();
  }

private:
  cudaStream_t stream_ = nullptr;
  std::promise<void> release_;
  std::future<cudaError_t> ended_;
};

// (3) A launch on its own stream must not break another thread's capture
// of a blocking stream (global mode: the strictest).
TEST_F(FakeRuntime, FirstLaunchLeavesAnotherThreadsCaptureIntact) {
  CaptureOnAnotherThread other;
  smpart::KernelHandle h = launch(stream_);
  EXPECT_TRUE(h.status().ok()) << h.status().message();
  EXPECT_EQ(other.end(), cudaSuccess) << "the launch invalidated the capture";
  EXPECT_TRUE(h.wait().ok());
  EXPECT_TRUE(monitor_.errorsSoFar().empty()) << monitor_.errorsSoFar()[0];
}

// Another thread captures a graph in global mode (CUDA's default) while a
// kernel runs under a launch observer: the notice thread's queries of the
// kernel's events (every 10 us), progress() and wait() must leave that
// capture intact. In global mode an event query is a "potentially unsafe"
// call that CUDA refuses, invalidating the capture.
TEST_F(FakeRuntime, WatchedKernelLeavesAnotherThreadsGlobalCaptureIntact) {
  struct Counting : smpart::LaunchObserver {
    std::atomic<unsigned> launches{0}, done{0};
    void onLaunch(const smpart::KernelHandle &) override { ++launches; }
    void onDone(const smpart::KernelHandle &) override { ++done; }
  };
  auto observer = std::make_shared<Counting>();
  smpart::setLaunchObserver(observer);
  CaptureOnAnotherThread other;
  monitor_.hold = true;
  smpart::KernelHandle h = launch(stream_);
  EXPECT_TRUE(h.status().ok()) << h.status().message();
  std::this_thread::sleep_for(std::chrono::milliseconds(20)); // many polls
  smpart::Progress p;
  EXPECT_TRUE(h.progress(p).ok());
  monitor_.hold = false;
  fake_cuda::pump();
  EXPECT_TRUE(h.wait().ok());
  for (int i = 0; i < 1000 && observer->done.load() == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(other.end(), cudaSuccess) << "smpart invalidated the capture";
  EXPECT_EQ(observer->launches.load(), 1u);
  EXPECT_EQ(observer->done.load(), 1u);
  smpart::setLaunchObserver(nullptr);
}

// A launch enqueued behind a rewritten kernel on the same stream marks that
// kernel (KernelHandle::successorQueued): a controller then leaves its SMs
// to the launch behind it instead of handing them to other kernels.
TEST_F(FakeRuntime, LaunchQueuedBehindAKernelMarksItAsFollowed) {
  auto observer = std::make_shared<smpart::LaunchObserver>();
  smpart::setLaunchObserver(observer);
  monitor_.hold = true;
  smpart::KernelHandle first = launch(stream_);
  smpart::KernelHandle second = launch(stream_);
  smpart::KernelHandle elsewhere = launch(nullptr);
  EXPECT_TRUE(first.successorQueued());
  EXPECT_FALSE(second.successorQueued());
  EXPECT_FALSE(elsewhere.successorQueued());
  monitor_.hold = false;
  fake_cuda::pump();
  EXPECT_TRUE(first.wait().ok());
  EXPECT_TRUE(second.wait().ok());
  EXPECT_TRUE(elsewhere.wait().ok());
  smpart::setLaunchObserver(nullptr);
  EXPECT_TRUE(monitor_.errorsSoFar().empty()) << monitor_.errorsSoFar()[0];
}

// What rewritten code calls (smpart/launch.hpp): the same launch without
// the handle. The runtime owns the closure, calls it for the kernel, and
// destroys it once the kernel is done and forgotten.
TEST_F(FakeRuntime, RewrittenLaunchRunsAndReleasesItsClosure) {
  auto token = std::make_shared<int>(0);
  std::atomic<unsigned> calls{0};
  std::weak_ptr<int> alive = token;
  smpart::launchRewritten(
      {"testKernel", nullptr}, dim3(100), dim3(64), 0, stream_,
      [token = std::move(token), &calls](const smpart::LaunchParams &p) {
        ++calls;
        smpart::LaunchControl ctl = p.ctl;
        void *args[] = {&ctl};
        cudaLaunchKernel(reinterpret_cast<const void *>(&testKernel), p.grid,
                         p.block, args, p.smem, p.stream);
      });
  EXPECT_EQ(calls.load(), 1u);
  EXPECT_EQ(monitor_.finished.load(), 1u);
  EXPECT_TRUE(smpart::getLastError().ok());
  // The registry drops a finished kernel (and its closure) at a later
  // launch: launch until it has.
  for (int i = 0; i < 100 && !alive.expired(); ++i)
    EXPECT_TRUE(launch(stream_).wait().ok());
  EXPECT_TRUE(alive.expired()) << "the closure outlived its kernel";
  EXPECT_TRUE(monitor_.errorsSoFar().empty()) << monitor_.errorsSoFar()[0];
}

/// Kernels that hold their stream until released, to put work ahead of
/// a launch (each its own address: the fake knows kernels by address).
void holdingKernelA() {}
void holdingKernelB() {}

// cudaStreamPerThread is each host thread's own stream: thread A's launch
// queued behind A's work neither delays the announcement of thread B's
// launch, ready once B's work ends, nor is followed by it.
TEST_F(FakeRuntime, PerThreadStreamsOfTwoThreadsAreNotOneQueue) {
  struct Names : smpart::LaunchObserver {
    std::mutex mu;
    std::vector<unsigned long long> announced;
    void onLaunch(const smpart::KernelHandle &h) override {
      std::lock_guard<std::mutex> lock(mu);
      announced.push_back(h.id());
    }
    bool heard(unsigned long long id) {
      std::lock_guard<std::mutex> lock(mu);
      return std::count(announced.begin(), announced.end(), id) == 1;
    }
  };
  auto observer = std::make_shared<Names>();
  smpart::setLaunchObserver(observer);
  std::atomic<bool> hold_a{true}, hold_b{true};
  const auto holding = [](std::atomic<bool> &hold) {
    return [&hold](void **, dim3, dim3) {
      fake_cuda::KernelRun r;
      r.held = [&hold] { return hold.load(); };
      return r;
    };
  };
  fake_cuda::registerKernel(reinterpret_cast<const void *>(&holdingKernelA),
                            holding(hold_a));
  fake_cuda::registerKernel(reinterpret_cast<const void *>(&holdingKernelB),
                            holding(hold_b));
  const auto behindHeldWork = [this](void (*held)()) {
    EXPECT_EQ(cudaLaunchKernel(reinterpret_cast<const void *>(held), dim3(1),
                               dim3(32), nullptr, 0, cudaStreamPerThread),
              cudaSuccess);
    return launch(cudaStreamPerThread);
  };
  // Both threads live to the end: a new thread may get an ended one's id.
  std::promise<void> end;
  std::shared_future<void> ended = end.get_future().share();
  smpart::KernelHandle a, a_next, b;
  std::promise<void> a_launched, b_launched;
  std::thread thread_a([&] {
    a = behindHeldWork(&holdingKernelA);
    a_next = launch(cudaStreamPerThread);
    a_launched.set_value();
    ended.wait();
  });
  a_launched.get_future().wait();
  std::thread thread_b([&] {
    b = behindHeldWork(&holdingKernelB);
    b_launched.set_value();
    ended.wait();
  });
  b_launched.get_future().wait();
  EXPECT_TRUE(a.status().ok() && a_next.status().ok() && b.status().ok());
  EXPECT_TRUE(a.successorQueued()) << "A's next launch is behind it";
  EXPECT_FALSE(a_next.successorQueued()) << "B's launch is not behind A's";

  hold_b = false;
  fake_cuda::pump();
  EXPECT_TRUE(b.wait().ok());
  for (int i = 0; i < 5000 && !observer->heard(b.id()); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_TRUE(observer->heard(b.id()))
      << "B's launch waited for A's unrelated work";
  EXPECT_FALSE(observer->heard(a.id())) << "A's launch cannot run yet";

  hold_a = false;
  fake_cuda::pump();
  EXPECT_TRUE(a.wait().ok());
  EXPECT_TRUE(a_next.wait().ok());
  for (int i = 0; i < 5000 && !observer->heard(a_next.id()); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  smpart::setLaunchObserver(nullptr);
  EXPECT_TRUE(observer->heard(a.id()) && observer->heard(a_next.id()));
  end.set_value();
  thread_a.join();
  thread_b.join();
  EXPECT_TRUE(monitor_.errorsSoFar().empty()) << monitor_.errorsSoFar()[0];
}

// With an observer installed the notice thread watches a kernel from its
// launch, sees its last block and lets it go; a callback set after that
// still runs (it once waited for an event already past).
TEST_F(FakeRuntime, LastBlockCallbackSetAfterTheKernelEndedRuns) {
  smpart::setLaunchObserver(std::make_shared<smpart::LaunchObserver>());
  smpart::KernelHandle h = launch(stream_);
  ASSERT_TRUE(h.wait().ok());
  // Long enough for the notice thread (it polls every ~10 us) to see the
  // kernel end and stop watching it.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::atomic<bool> called{false};
  ASSERT_TRUE(h.onLastBlockTaken([&] { called = true; }).ok());
  for (int i = 0; i < 10000 && !called; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  smpart::setLaunchObserver(nullptr);
  EXPECT_TRUE(called);
}

// A device reset (cudaDeviceReset) under a running kernel is seen without
// another launch on the device: the handle says so (progress() too, which
// a program may poll) and wait() returns rather than query the kernel's
// destroyed event, and the notice thread
// tells the observer the kernel is done instead of asking about its
// events for ever.
TEST_F(FakeRuntime, DeviceResetIsSeenWithoutAnotherLaunch) {
  struct Done : smpart::LaunchObserver {
    std::atomic<unsigned> done{0};
    void onDone(const smpart::KernelHandle &) override { ++done; }
  };
  auto observer = std::make_shared<Done>();
  smpart::setLaunchObserver(observer);
  monitor_.hold = true;
  smpart::KernelHandle h = launch(stream_);
  ASSERT_TRUE(h.status().ok()) << h.status().message();
  ASSERT_EQ(cudaDeviceReset(), cudaSuccess);
  // A loop polling progress() (host memory only) ends too.
  smpart::Progress p;
  ASSERT_EQ(h.progress(p).code(), smpart::Errc::kDeviceReset);
  ASSERT_EQ(h.status().code(), smpart::Errc::kDeviceReset);
  EXPECT_EQ(h.wait().code(), smpart::Errc::kDeviceReset);
  for (int i = 0; i < 5000 && observer->done == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  smpart::setLaunchObserver(nullptr);
  EXPECT_EQ(observer->done.load(), 1u);
  EXPECT_TRUE(smpart::activeKernels().empty());
}

// An observer that throws, on the launching thread (onLaunch) and on the
// notice thread (onDone, where an escaping exception is std::terminate):
// one line each on stderr, and the kernel runs.
TEST_F(FakeRuntime, ObserverExceptionsAreReportedNotFatal) {
  struct Throwing : smpart::LaunchObserver {
    void onLaunch(const smpart::KernelHandle &) override {
      throw std::runtime_error("boom at launch");
    }
    void onDone(const smpart::KernelHandle &) override {
      throw std::runtime_error("boom at done");
    }
  };
  smpart::setLaunchObserver(std::make_shared<Throwing>());
  testing::internal::CaptureStderr();
  smpart::KernelHandle h = launch(stream_);
  const bool waited = h.wait().ok();
  // The notice thread polls every ~10 us: it has seen the end by then.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const std::string err = testing::internal::GetCapturedStderr();
  smpart::setLaunchObserver(nullptr);
  EXPECT_TRUE(waited);
  EXPECT_NE(err.find("smpart: onLaunch for kernel 'testKernel' threw: boom "
                     "at launch; ignored"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("threw: boom at done; ignored"), std::string::npos) << err;
  EXPECT_EQ(monitor_.finished.load(), 1u);
}

// An EpochTimer closes its controller's epochs (what online policies decide
// at) on a thread of its own, and none after stop().
TEST_F(FakeRuntime, EpochTimerClosesEpochsUntilStopped) {
  smpart::ControllerOptions options;
  options.epoch_us = 200;
  auto controller = std::make_shared<smpart::Controller>(
      *smpart::policy::findPolicy("even"), smpart::policy::ProfileSet{},
      std::vector<unsigned>{0, 1, 2, 3}, options);
  smpart::EpochTimer timer(controller);
  for (int i = 0; i < 2000 && controller->lastEpoch().index < 3; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  timer.stop();
  const unsigned long long closed = controller->lastEpoch().index;
  EXPECT_GE(closed, 3u);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(controller->lastEpoch().index, closed);
}

// A kernel with more than 48 KB of dynamic shared memory whose program
// sets the limit to its own size before every launch (the rewrite points
// that call at the rewritten kernel): every launch must still fit the
// protocol's tail, not only the first.
TEST_F(FakeRuntime, SharedMemoryLimitSetBeforeEveryLaunchKeepsTheTail) {
  const void *fn = reinterpret_cast<const void *>(&testKernel);
  constexpr int kSmem = 64 * 1024;
  unsigned originals = 0;
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(cudaFuncSetAttribute(
                  fn, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem),
              cudaSuccess);
    smpart::KernelHandle h = smpart::launch(
        {"testKernel", fn, true}, dim3(100), dim3(64), kSmem, stream_,
        [&](const smpart::LaunchParams &p) {
          if (p.original) {
            ++originals;
            return;
          }
          smpart::LaunchControl ctl = p.ctl;
          void *args[] = {&ctl};
          cudaLaunchKernel(fn, p.grid, p.block, args, p.smem, p.stream);
        });
    EXPECT_TRUE(h.status().ok())
        << "launch " << i << ": " << h.status().message();
    EXPECT_TRUE(h.wait().ok()) << "launch " << i;
  }
  EXPECT_EQ(originals, 0u);
  EXPECT_EQ(monitor_.finished.load(), 3u);
  EXPECT_TRUE(monitor_.errorsSoFar().empty()) << monitor_.errorsSoFar()[0];
}

// The same kernel's relaunch (a controller's grow or resume) after the
// program set the limit back to its own size for its next launch: the
// relaunch still needs the tail, and its failure must not stay in the
// controller thread's CUDA error, where it would hide the next one.
TEST_F(FakeRuntime, RelaunchAfterTheProgramResetTheSharedMemoryLimit) {
  const void *fn = reinterpret_cast<const void *>(&testKernel);
  constexpr int kSmem = 64 * 1024;
  ASSERT_EQ(cudaFuncSetAttribute(
                fn, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem),
            cudaSuccess);
  monitor_.hold = true;
  smpart::KernelHandle h = smpart::launch(
      {"testKernel", fn, true}, dim3(100), dim3(64), kSmem, stream_,
      [&](const smpart::LaunchParams &p) {
        smpart::LaunchControl ctl = p.ctl;
        void *args[] = {&ctl};
        cudaLaunchKernel(fn, p.grid, p.block, args, p.smem, p.stream);
      });
  ASSERT_TRUE(h.status().ok()) << h.status().message();
  ASSERT_EQ(cudaFuncSetAttribute(
                fn, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem),
            cudaSuccess);
  smpart::Status grown =
      std::async(std::launch::async, [&] {
        smpart::Status st = h.grow(4);
        if (cudaPeekAtLastError() != cudaSuccess)
          return smpart::Status(smpart::Errc::kCuda,
                                "grow left a CUDA error in its thread");
        return st;
      }).get();
  EXPECT_TRUE(grown.ok()) << grown.message();
  monitor_.hold = false;
  fake_cuda::pump();
  EXPECT_TRUE(h.wait().ok());
}

void relaunchedInstance() {}

// A kernel grown or resumed again and again over a long run keeps one
// event per relaunch only until that relaunch completed.
TEST_F(FakeRuntime, CompletedRelaunchesLeaveNoEvent) {
  const void *fn = reinterpret_cast<const void *>(&testKernel);
  const void *again = reinterpret_cast<const void *>(&relaunchedInstance);
  fake_cuda::registerKernel(again, [](void **, dim3, dim3) {
    return fake_cuda::KernelRun{[] {}, [] { return false; }, [] {}};
  });
  monitor_.hold = true;
  smpart::KernelHandle h = smpart::launch(
      {"testKernel", fn}, dim3(100), dim3(64), 0, stream_,
      [&](const smpart::LaunchParams &p) {
        smpart::LaunchControl ctl = p.ctl;
        void *args[] = {&ctl};
        cudaLaunchKernel(p.ctl.first_instance ? fn : again, p.grid, p.block,
                         args, p.smem, p.stream);
      });
  ASSERT_TRUE(h.status().ok()) << h.status().message();
  ASSERT_TRUE(h.grow(4).ok());
  const long after_one = fake_cuda::liveEvents();
  for (int i = 0; i < 5; ++i)
    ASSERT_TRUE(h.grow(4).ok());
  EXPECT_EQ(fake_cuda::liveEvents(), after_one);
  monitor_.hold = false;
  fake_cuda::pump();
  EXPECT_TRUE(h.wait().ok());
}

// A captured launch's handle writes the knobs of its graph's control
// block; once the graph is destroyed that block serves other launches, so
// the handle takes no knob any more and says why.
TEST_F(FakeRuntime, CapturedHandleTakesNoKnobsOnceItsGraphIsGone) {
  smpart::KernelHandle captured;
  cudaGraph_t g = capture(stream_, cudaStreamCaptureModeGlobal, &captured);
  ASSERT_TRUE(captured.captured());
  EXPECT_TRUE(captured.setCtasPerSm(2).ok());
  cudaGraphDestroy(g);
  const smpart::Status st = captured.setCtasPerSm(1);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("graph"), std::string::npos) << st.message();
  // The next launch may get that control block: its knobs stay its own.
  monitor_.hold = true;
  smpart::KernelHandle next = launch(stream_);
  const unsigned ctas = next.knobs().ctas_per_sm;
  EXPECT_FALSE(captured.setCtasPerSm(1).ok());
  EXPECT_EQ(next.knobs().ctas_per_sm, ctas);
  monitor_.hold = false;
  fake_cuda::pump();
  EXPECT_TRUE(next.wait().ok());
}

// A callback set on a captured launch's handle belongs to its graph's
// control block; once the graph is destroyed that block serves other
// launches, whose last block is not the captured kernel's: its callback
// never runs, and the notice thread stops watching it.
TEST_F(FakeRuntime, CapturedCallbackDoesNotFireOnALaunchAfterItsGraph) {
  monitor_.note_last_block = true;
  smpart::KernelHandle captured;
  cudaGraph_t g = capture(stream_, cudaStreamCaptureModeGlobal, &captured);
  ASSERT_TRUE(captured.captured());
  std::atomic<bool> stale{false};
  ASSERT_TRUE(captured.onLastBlockTaken([&] { stale = true; }).ok());
  cudaGraphDestroy(g);
  // The next launches may get that control block; each one's own callback
  // runs in a pass of the notice thread after the captured kernel's check
  // (it was watched first) saw the same notices.
  for (int i = 0; i < 3; ++i) {
    smpart::KernelHandle next = launch(stream_);
    std::atomic<bool> own{false};
    ASSERT_TRUE(next.onLastBlockTaken([&] { own = true; }).ok());
    fake_cuda::pump();
    ASSERT_TRUE(next.wait().ok());
    for (int t = 0; t < 10000 && !own; ++t)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ASSERT_TRUE(own);
  }
  EXPECT_FALSE(stale) << "the captured kernel's callback ran on another "
                         "launch's last block";
}

// A kernel on the legacy stream also waits for every blocking stream,
// which a query of its own stream does not show: the observer hears of it
// from the notice thread once it is ready, never at the launch.
TEST_F(FakeRuntime, LegacyStreamKernelIsAnnouncedWhenReady) {
  struct Threads : smpart::LaunchObserver {
    std::mutex mu;
    std::vector<std::thread::id> at;
    void onLaunch(const smpart::KernelHandle &) override {
      std::lock_guard<std::mutex> lock(mu);
      at.push_back(std::this_thread::get_id());
    }
  };
  auto observer = std::make_shared<Threads>();
  smpart::setLaunchObserver(observer);
  smpart::KernelHandle legacy = launch(nullptr);
  smpart::KernelHandle own = launch(stream_);
  EXPECT_TRUE(legacy.wait().ok());
  EXPECT_TRUE(own.wait().ok());
  for (int i = 0; i < 1000; ++i) {
    {
      std::lock_guard<std::mutex> lock(observer->mu);
      if (observer->at.size() == 2)
        break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  smpart::setLaunchObserver(nullptr);
  std::lock_guard<std::mutex> lock(observer->mu);
  ASSERT_EQ(observer->at.size(), 2u);
  const std::thread::id me = std::this_thread::get_id();
  EXPECT_EQ(std::count(observer->at.begin(), observer->at.end(), me), 1)
      << "the idle non-blocking stream's kernel at its launch, the legacy "
         "stream's from the notice thread";
}

TEST_F(FakeRuntime, ReservedSmsAreLeftOutOfANewLaunchsDefaultMask) {
  // What an open partition keeps is left out of the mask a kernel starts
  // with, before any planner has seen it (a launch queued behind other
  // work is announced only when its stream reaches it).
  smpart::DeviceInfo info;
  ASSERT_TRUE(smpart::deviceInfo(info).ok());
  ASSERT_EQ(info.sm_ids, (std::vector<unsigned>{3, 40, 77, 300}));
  auto maskOf = [](const smpart::KernelHandle &h) {
    const smpart::Knobs k = h.knobs();
    std::vector<unsigned> ids;
    for (unsigned id : {3u, 40u, 77u, 300u})
      if ((k.sm_mask[id / 32] >> (id % 32)) & 1u)
        ids.push_back(id);
    return ids;
  };
  const int tenant = 0, other = 0; // two owners
  smpart::detail::reserveSms(&tenant, info.device, {3, 40});
  // Another device's reservation is not this one's.
  smpart::detail::reserveSms(&other, info.device + 1, {77});
  smpart::KernelHandle h = launch(stream_);
  EXPECT_EQ(maskOf(h), (std::vector<unsigned>{77, 300}));
  EXPECT_TRUE(h.wait().ok());
  // A captured launch keeps every SM: its knobs serve every replay, also
  // after the partition is gone.
  ASSERT_EQ(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeGlobal),
            cudaSuccess);
  smpart::KernelHandle captured = launch(stream_);
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamEndCapture(stream_, &graph), cudaSuccess);
  EXPECT_EQ(maskOf(captured), info.sm_ids);
  cudaGraphDestroy(graph);
  // Every SM reserved: a kernel keeps them all rather than none.
  smpart::detail::reserveSms(&other, info.device, {77, 300});
  smpart::KernelHandle all = launch(stream_);
  EXPECT_EQ(maskOf(all), info.sm_ids);
  EXPECT_TRUE(all.wait().ok());
  smpart::detail::releaseSms(&tenant);
  smpart::detail::releaseSms(&other);
  smpart::KernelHandle after = launch(stream_);
  EXPECT_EQ(maskOf(after), info.sm_ids);
  EXPECT_TRUE(after.wait().ok());
}

// A kernel no translation unit registered (a template instance) is loaded
// by its own first launch. A load may wait for every running kernel, and
// a preempted kernel runs until a controller resumes it, which takes the
// runtime's lock: the load must not hold that lock.
TEST_F(FakeRuntime, LaunchLoadsItsKernelWithoutHoldingTheRuntimeLock) {
  const void *fn = reinterpret_cast<const void *>(&testKernel);
  ASSERT_TRUE(smpart::init().ok());
  ASSERT_FALSE(fake_cuda::loaded(fn));
  int loads = 0;
  bool locked = false;
  fake_cuda::onLoad([&](const void *loading) {
    if (loading != fn)
      return;
    ++loads;
    // From another thread, as the controller's resume would; the notice
    // thread may hold the lock for a moment, the launching thread holds it
    // for the whole load if at all.
    locked = !std::async(std::launch::async, [] {
                for (int i = 0; i < 200; ++i) {
                  if (smpart::detail::runtime().mu.try_lock()) {
                    smpart::detail::runtime().mu.unlock();
                    return true;
                  }
                  std::this_thread::sleep_for(std::chrono::milliseconds(1));
                }
                return false;
              }).get();
  });
  smpart::KernelHandle h = smpart::launch(
      {"testKernel", fn}, dim3(100), dim3(64), 0, stream_,
      [&](const smpart::LaunchParams &p) {
        smpart::LaunchControl ctl = p.ctl;
        void *args[] = {&ctl};
        cudaLaunchKernel(fn, p.grid, p.block, args, p.smem, p.stream);
      });
  EXPECT_TRUE(h.status().ok()) << h.status().message();
  EXPECT_EQ(loads, 1);
  EXPECT_FALSE(locked) << "the launch loaded its kernel under the lock";
  EXPECT_TRUE(h.wait().ok());
  fake_cuda::onLoad(nullptr);
}

// An opaque launch that is captured (each replay is a launch of its own)
// or that fails never reaches the live list, where a finished launch's
// event is destroyed: it must not create one that nothing destroys.
TEST_F(FakeRuntime, CapturedOrFailedOpaqueLaunchesLeaveNoEvent) {
  const void *fn = reinterpret_cast<const void *>(&testKernel);
  ASSERT_TRUE(smpart::init().ok());
  auto opaque = [&](cudaStream_t s, unsigned blocks) {
    return smpart::launchOpaque(
        {"testKernel", fn}, dim3(100), dim3(64), 0, s,
        [&, blocks](dim3, dim3 block, std::size_t smem, cudaStream_t st) {
          smpart::LaunchControl ctl{};
          void *args[] = {&ctl};
          cudaLaunchKernel(fn, dim3(blocks), block, args, smem, st);
        });
  };
  const long before = fake_cuda::liveEvents();
  for (int i = 0; i < 5; ++i) {
    cudaGraph_t g = nullptr;
    ASSERT_EQ(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeGlobal),
              cudaSuccess);
    smpart::KernelHandle h = opaque(stream_, 100);
    EXPECT_TRUE(h.status().ok()) << h.status().message();
    EXPECT_TRUE(h.captured());
    ASSERT_EQ(cudaStreamEndCapture(stream_, &g), cudaSuccess);
    cudaGraphDestroy(g);
  }
  for (int i = 0; i < 5; ++i) {
    smpart::KernelHandle h = opaque(stream_, 0); // an empty grid: refused
    EXPECT_FALSE(h.status().ok());
    cudaGetLastError();
  }
  EXPECT_EQ(fake_cuda::liveEvents(), before);
}

// The pool's device memory is never zeroed by a legacy-stream memset: a
// slot's first launch copies the whole State, zero slot words included.
TEST_F(FakeRuntime, InitLoadsRegisteredKernelsBeforeAnyLaunch) {
  // Under lazy module loading a load may wait for every running kernel: a
  // program that starts kernels of its own that wait for the host right
  // after init() must find nothing of smpart left to load. (ctest runs
  // each test in a process of its own: no transformed launch before.)
  static const char kernel = 0;
  ASSERT_TRUE(smpart::detail::registerKernel(&kernel, "registered"));
  ASSERT_FALSE(fake_cuda::loaded(&kernel))
      << "loaded at registration: this process launched before the test";
  ASSERT_TRUE(smpart::init().ok());
  EXPECT_TRUE(fake_cuda::loaded(&kernel));
}

// A new context (the device was reset) has no module loaded: its first
// launch loads every registered kernel again before it is enqueued, as
// the first launch of the process did.
TEST_F(FakeRuntime, NewContextLoadsRegisteredKernelsAgain) {
  static const char kernel = 0;
  ASSERT_TRUE(smpart::detail::registerKernel(&kernel, "registered"));
  ASSERT_TRUE(smpart::init().ok());
  ASSERT_TRUE(fake_cuda::loaded(&kernel));
  fresh(); // cudaDeviceReset: a new context
  ASSERT_FALSE(fake_cuda::loaded(&kernel));
  smpart::KernelHandle h = launch(stream_);
  EXPECT_TRUE(h.status().ok()) << h.status().message();
  EXPECT_TRUE(fake_cuda::loaded(&kernel))
      << "the new context would load it lazily beside spinning kernels";
  EXPECT_TRUE(h.wait().ok());
}

TEST_F(FakeRuntime, FreshSlotStartsWithZeroSlotWords) {
  for (int i = 0; i < 3; ++i) {
    smpart::KernelHandle h = launch(stream_);
    ASSERT_TRUE(h.status().ok()) << h.status().message();
    EXPECT_TRUE(h.wait().ok());
  }
  EXPECT_EQ(monitor_.finished.load(), 3u);
  EXPECT_TRUE(monitor_.errorsSoFar().empty()) << monitor_.errorsSoFar()[0];
}

// A launch's end is one store of Notices::finished: the handle reports
// the whole grid taken and done, nothing resident or parked, and the last
// block taken, whatever the mirror still says.
TEST_F(FakeRuntime, FinishedLaunchReportsItsWholeProgress) {
  smpart::KernelHandle h = launch(stream_, 100);
  ASSERT_TRUE(h.status().ok()) << h.status().message();
  ASSERT_TRUE(h.wait().ok());
  smpart::Progress p;
  ASSERT_TRUE(h.progress(p).ok());
  EXPECT_TRUE(p.finished);
  EXPECT_TRUE(p.started);
  EXPECT_EQ(p.taken, 100u);
  EXPECT_EQ(p.done, 100u);
  EXPECT_EQ(p.resident_ctas, 0u);
  EXPECT_FALSE(p.parked);
  EXPECT_TRUE(h.lastBlockTaken());
}

// (9) deviceInfo() waiting for a probe that has not answered must not hold
// up launches on other threads.
TEST_F(FakeRuntime, LaunchDoesNotWaitBehindASlowProbe) {
  fake_cuda::holdProbes(true);
  ASSERT_TRUE(smpart::init().ok());
  std::future<std::pair<smpart::DeviceInfo, double>> info =
      std::async(std::launch::async, [] {
        const auto t0 = Clock::now();
        smpart::DeviceInfo d;
        EXPECT_TRUE(smpart::deviceInfo(d).ok());
        return std::make_pair(
            d, std::chrono::duration<double>(Clock::now() - t0).count());
      });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const auto t0 = Clock::now();
  smpart::KernelHandle h = launch(stream_);
  const double launch_s =
      std::chrono::duration<double>(Clock::now() - t0).count();
  EXPECT_TRUE(h.status().ok()) << h.status().message();
  EXPECT_LT(launch_s, 0.5) << "the launch waited for the SM-id probe";
  const auto [d, waited] = info.get();
  EXPECT_GT(waited, 1.0) << "deviceInfo() did not wait for the probe";
  // Not answered: the ids are unknown, not made up.
  EXPECT_FALSE(d.sm_ids_probed);
  EXPECT_TRUE(d.sm_ids.empty());
  EXPECT_TRUE(smpart::smSet(d, 0, 4).none());
  // Once the probe answers, the real ids.
  fake_cuda::holdProbes(false);
  smpart::DeviceInfo later;
  ASSERT_TRUE(smpart::deviceInfo(later).ok());
  EXPECT_TRUE(later.sm_ids_probed);
  EXPECT_EQ(later.sm_ids, (std::vector<unsigned>{3, 40, 77, 300}));
}

// (9) A probe that saw only some SMs (the others were busy) is repeated;
// its bits accumulate. Nothing is filled in.
TEST_F(FakeRuntime, ProbeThatMissedSmsIsRepeatedNotInvented) {
  fake_cuda::setProbeRuns({{3, 300}, {40}, {77, 3}});
  smpart::DeviceInfo d;
  ASSERT_TRUE(smpart::deviceInfo(d).ok());
  EXPECT_TRUE(d.sm_ids_probed);
  EXPECT_EQ(d.sm_ids, (std::vector<unsigned>{3, 40, 77, 300}));
  EXPECT_EQ(fake_cuda::probeLaunches(), 3u);
}

// (2) Each replay of a captured launch starts from a clean control block:
// the State header, zero slot words and zero Notices.
TEST_F(FakeRuntime, GraphReplaysStartFromACleanControlBlock) {
  monitor_.expect_graph_state = true;
  replayThreeTimes();
}

// (2) Without stream-ordered allocation the graph keeps the slot's State;
// replays still start clean.
TEST_F(FakeRuntime, GraphReplaysStartCleanWithoutMemoryPools) {
  fresh(/*memory_pools=*/false);
  replayThreeTimes();
}

// (2) Two executable graphs of one captured launch never run on one live
// control block: CUDA refuses the second while the first exists (the graph
// holds an allocation node). Separate captures run concurrently, each on
// its own.
TEST_F(FakeRuntime, ExecsOfOneCapturedLaunchNeverShareState) {
  cudaStream_t other = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking),
            cudaSuccess);
  cudaGraph_t g = capture(stream_);
  ASSERT_NE(g, nullptr);
  cudaGraphExec_t x1 = nullptr, x2 = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&x1, g, 0), cudaSuccess);
  const cudaError_t second = cudaGraphInstantiate(&x2, g, 0);
  monitor_.hold = true;
  ASSERT_EQ(cudaGraphLaunch(x1, stream_), cudaSuccess);
  if (second == cudaSuccess) {
    ASSERT_EQ(cudaGraphLaunch(x2, other), cudaSuccess);
  }
  monitor_.hold = false;
  fake_cuda::pump();
  EXPECT_TRUE(monitor_.errorsSoFar().empty()) << monitor_.errorsSoFar()[0];
  EXPECT_NE(second, cudaSuccess)
      << "a second executable graph of the captured launch was allowed";
  cudaGraphExecDestroy(x1);
  if (second == cudaSuccess)
    cudaGraphExecDestroy(x2);
  // Once the first is gone, another may be made.
  ASSERT_EQ(cudaGraphInstantiate(&x2, g, 0), cudaSuccess);
  cudaGraphExecDestroy(x2);

  // Two captures of the same work: two graphs, run at the same time.
  cudaGraph_t g2 = capture(stream_);
  ASSERT_NE(g2, nullptr);
  ASSERT_EQ(cudaGraphInstantiate(&x1, g, 0), cudaSuccess);
  ASSERT_EQ(cudaGraphInstantiate(&x2, g2, 0), cudaSuccess);
  const unsigned before = monitor_.finished.load();
  monitor_.hold = true;
  ASSERT_EQ(cudaGraphLaunch(x1, stream_), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(x2, other), cudaSuccess);
  EXPECT_EQ(monitor_.started.load() - before, 2u) << "both run at once";
  monitor_.hold = false;
  fake_cuda::pump();
  EXPECT_EQ(monitor_.finished.load() - before, 2u);
  EXPECT_TRUE(monitor_.errorsSoFar().empty()) << monitor_.errorsSoFar()[0];
  cudaGraphExecDestroy(x1);
  cudaGraphExecDestroy(x2);
  cudaGraphDestroy(g);
  cudaGraphDestroy(g2);
}

} // namespace
