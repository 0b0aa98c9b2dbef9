// GPU figures of libsmpart, printed as ratios measured in the same run:
//  (a) overhead of a rewritten kernel against its original (target: geomean
//      <= 1.02, worst <= 1.05) on grids that fill the GPU: every kernel of
//      test_inputs/ that nvcc compiles (original and smpart-transform output
//      from the smpart_gpu_inputs library, built when the tool is available),
//      then the synthetic recording kernel of gpu_kernels.cuh;
//  (a'') where a rewritten launch's fixed cost goes (start, blocks, end),
//      on the device clock;
//  (b) preemption latency, preempt() to the last CTA gone, p50/p99 over
//      100 trials, against the kernel's mean logical-block time (target:
//      p99 <= K blocks + 20 us): on the device's clock (the host's call
//      time moved onto %globaltimer by a calibration, to the device's
//      acknowledgement time Notices::acked_ns), and as the host observes
//      it (preempt() to drain() returning);
//  (c) time to confine a running kernel from all SMs to half of them, and
//      (c') until the device acknowledges it (knobsApplied: the SMs may
//      move), on the device's clock and host-observed;
//  (d) the controller's reaction: a kernel's acknowledgement (device
//      clock) to the knob write that the grant waiting for it makes
//      (target: p99 <= 20 us).
// Without a GPU it prints "no GPU: skipped" and exits 0. Not a test: it
// asserts nothing. Every wait has a deadline (kDeadlineS): a kernel that
// does not finish in time gets a "FAILED" line for its figure, the figures
// after it are skipped with the reason (the kernel may still hold the GPU),
// and the program exits 1 instead of hanging.
#include "bounded_wait.hpp"
#include "gpu_kernels.cuh"
#include "smpart/controller.hpp"
#include "smpart/controller_runtime.hpp"
#include "smpart/policy/policy.hpp"
#if defined(SMPART_BENCH_INPUTS)
#include "gpu_inputs.hpp"
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using smpart_test::BlockRecord;
using Clock = std::chrono::steady_clock;

namespace {

/// Deadline of one wait: every healthy one here takes milliseconds.
constexpr double kDeadlineS = 5;

/// The first figure whose kernel missed its deadline: that kernel may
/// still run, so later figures would measure it or wait behind it.
std::string g_hung;
int g_failures = 0;

/// Prints the failure line of `figure`; `hung`: a wait timed out.
void fail(const std::string &figure, const std::string &why, bool hung) {
  std::printf("%s: FAILED: %s\n", figure.c_str(), why.c_str());
  ++g_failures;
  if (hung && g_hung.empty())
    g_hung = figure;
}

/// True (after a line saying so) when `figure` must be skipped because an
/// earlier kernel did not finish.
bool skipHung(const char *figure) {
  if (g_hung.empty())
    return false;
  std::printf("%s: skipped: the kernel of \"%s\" did not finish within "
              "%.0f s and may still hold the GPU\n",
              figure, g_hung.c_str(), kDeadlineS);
  return true;
}

std::string cudaWhy(cudaError_t e) {
  return e == cudaErrorTimeout
             ? "kernel did not finish within " +
                   std::to_string(int(kDeadlineS)) + " s"
             : std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

bool ok(cudaError_t e, const char *what) {
  if (e != cudaSuccess)
    std::printf("error: %s: %s\n", what, cudaGetErrorString(e));
  return e == cudaSuccess;
}

double usSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1,
                    static_cast<std::size_t>(p * (v.size() - 1) + 0.5))];
}

using smpart::detail::globalTimerNs;

/// Holds its stream for `ns` of device time: put before a timed launch,
/// it covers the host's work of enqueuing that launch, so the interval the
/// events measure starts when the GPU could start the kernel.
__global__ void holdStream(unsigned long long ns) {
  const unsigned long long t0 = globalTimerNs();
  while (globalTimerNs() - t0 < ns) {
  }
}

/// Median time of `reps` launches on `s`, each behind a holdStream; NaN, after
/// the failure line of `figure`, when one does not finish in time.
template <class F>
double medianMs(const char *figure, cudaStream_t s, int reps, F &&launch) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    // The events time the kernel, not the host path that enqueues it.
    holdStream<<<1, 1, 0, s>>>(300000);
    cudaEventRecord(a, s);
    launch();
    cudaEventRecord(b, s);
    if (const cudaError_t e = smpart_test::syncEvent(b, kDeadlineS);
        e != cudaSuccess) {
      fail(figure, cudaWhy(e), e == cudaErrorTimeout);
      break;
    }
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    t.push_back(ms);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return int(t.size()) == reps ? percentile(t, 0.5)
                               : std::numeric_limits<double>::quiet_NaN();
}

// ---- (a'') where a launch's fixed cost goes, on the device clock ---------

/// %globaltimer stamps of one launch: `before` and `after` by one-thread
/// kernels on either side of it in the stream; `entry` the earliest CTA
/// to start, `first` the earliest logical block to start, `last` the
/// latest to end (atomicMin/Max by thread 0 of each).
struct LaunchStamps {
  unsigned long long before, entry, first, last, after;
};

__global__ void stampNow(unsigned long long *at) { *at = globalTimerNs(); }

/// Every block stores one float per thread, as the recording kernel does.
__global__ void stampOriginal(LaunchStamps *st, float *out) {
  if (threadIdx.x == 0) {
    const unsigned long long t = globalTimerNs();
    atomicMin(&st->entry, t);
    atomicMin(&st->first, t);
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = blockIdx.x * 2.0f;
  __syncthreads();
  if (threadIdx.x == 0)
    atomicMax(&st->last, globalTimerNs());
}

/// stampOriginal as smpart-transform writes it, with the CTA's entry.
__global__ void stampRewritten(smpart::LaunchControl smpart_ctl,
                               LaunchStamps *st, float *out) {
  if (threadIdx.x == 0)
    atomicMin(&st->entry, globalTimerNs());
  for (smpart::detail::Cta smpart_cta(smpart_ctl); smpart_cta.next();) {
    const uint3 blockIdx = smpart_cta.blockIdx();
    if (threadIdx.x == 0)
      atomicMin(&st->first, globalTimerNs());
    out[blockIdx.x * blockDim.x + threadIdx.x] = blockIdx.x * 2.0f;
    __syncthreads();
    if (threadIdx.x == 0)
      atomicMax(&st->last, globalTimerNs());
  }
}

/// The medians (us) of one variant's gaps: stream to its first CTA, first
/// CTA to first block, first block to last block end, last block end to
/// the next kernel in the stream.
struct LaunchSplit {
  double to_entry = 0, to_first = 0, blocks = 0, to_next = 0;
  bool ok = false;
};

template <class F>
LaunchSplit splitLaunch(const char *figure, cudaStream_t s, LaunchStamps *st,
                        F &&launch) {
  std::vector<double> entry, first, blocks, next;
  for (int i = 0; i < 15; ++i) {
    const LaunchStamps init{0, ~0ull, ~0ull, 0, 0};
    cudaMemcpyAsync(st, &init, sizeof init, cudaMemcpyHostToDevice, s);
    holdStream<<<1, 1, 0, s>>>(300000); // the host enqueues meanwhile
    stampNow<<<1, 1, 0, s>>>(&st->before);
    launch();
    stampNow<<<1, 1, 0, s>>>(&st->after);
    if (const cudaError_t e = smpart_test::syncStream(s, kDeadlineS);
        e != cudaSuccess) {
      fail(figure, cudaWhy(e), e == cudaErrorTimeout);
      return {};
    }
    LaunchStamps t;
    cudaMemcpy(&t, st, sizeof t, cudaMemcpyDeviceToHost);
    auto us = [](unsigned long long a, unsigned long long b) {
      return (static_cast<long long>(b) - static_cast<long long>(a)) / 1000.0;
    };
    entry.push_back(us(t.before, t.entry));
    first.push_back(us(t.entry, t.first));
    blocks.push_back(us(t.first, t.last));
    next.push_back(us(t.last, t.after));
  }
  return {percentile(entry, 0.5), percentile(first, 0.5),
          percentile(blocks, 0.5), percentile(next, 0.5), true};
}

/// Prints, for a grid of one block per CTA and one of 20, where the
/// rewritten launch's extra time goes: the launch handshake and first
/// decisions (first CTA to first block), the blocks, and the kernel's end
/// (last block to the next kernel: the last CTAs' give-backs, the anchor's
/// end, the CTAs' exit).
void launchCostSplit(cudaStream_t s, unsigned sms, float *out) {
  const char *fig = "(a'') launch cost split";
  LaunchStamps *st = nullptr;
  if (skipHung(fig) || !ok(cudaMalloc(&st, sizeof(LaunchStamps)), "cudaMalloc"))
    return;
  std::printf("(a'') where a launch's time goes, device clock, medians of 15 "
              "(us; original -> rewritten): stream to first CTA, first CTA "
              "to first block, first block to last block end, last block end "
              "to the next kernel\n");
  for (unsigned per_cta : {1u, 20u}) {
    const unsigned blocks = sms * 16 * per_cta;
    const LaunchSplit o = splitLaunch(
        fig, s, st, [&] { stampOriginal<<<blocks, 128, 0, s>>>(st, out); });
    if (!o.ok)
      break;
    const LaunchSplit x = splitLaunch(fig, s, st, [&] {
      smpart::launch(
          {"stampOriginal", reinterpret_cast<const void *>(&stampRewritten)},
          dim3(blocks), dim3(128), 0, s,
          [st, out](const smpart::LaunchParams &p) {
            stampRewritten<<<p.grid, p.block, p.smem, p.stream>>>(p.ctl, st,
                                                                  out);
          });
    });
    if (!x.ok)
      break;
    std::printf("  blocks=%u: %.1f -> %.1f, %.1f -> %.1f, %.1f -> %.1f, "
                "%.1f -> %.1f; extra: start %+.1f, blocks %+.1f, end %+.1f\n",
                blocks, o.to_entry, x.to_entry, o.to_first, x.to_first,
                o.blocks, x.blocks, o.to_next, x.to_next,
                (x.to_entry + x.to_first) - (o.to_entry + o.to_first),
                x.blocks - o.blocks, x.to_next - o.to_next);
  }
  cudaFree(st);
}

/// One calibration round per `go` value: waits until the host raises it,
/// then writes %globaltimer to host-mapped memory. Last, the smallest step
/// of %globaltimer (its resolution) goes to stamp[rounds + 1].
__global__ void clockProbe(const volatile unsigned *go,
                           volatile unsigned long long *stamp,
                           unsigned rounds) {
  unsigned long long t;
  for (unsigned i = 1; i <= rounds; ++i) {
    while (*go < i)
      ;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    stamp[i] = t;
    __threadfence_system();
  }
  unsigned long long a, b;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(a));
  do
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(b));
  while (b == a);
  stamp[rounds + 1] = b - a;
}

long long hostNs(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             t.time_since_epoch())
      .count();
}

/// steady_clock against %globaltimer: device_ns = host_ns + offset_ns,
/// within +- uncertainty_ns (half the best round trip) plus one step of
/// %globaltimer.
struct DeviceClock {
  bool ok = false;
  long long offset_ns = 0;
  double uncertainty_ns = 0;
  unsigned long long step_ns = 0;
  Clock::time_point when;
  long long toDevice(Clock::time_point t) const {
    return hostNs(t) + offset_ns;
  }
};

/// Calibrates once: the host stamps before it raises `go` and again on
/// seeing the device's write; the device's time lies between the two. The
/// round with the shortest round trip wins (the host is not descheduled,
/// no PCIe contention).
DeviceClock calibrate(cudaStream_t s) {
  constexpr unsigned kRounds = 64;
  DeviceClock c;
  unsigned *go = nullptr, *dgo = nullptr;
  unsigned long long *stamp = nullptr, *dstamp = nullptr;
  if (cudaHostAlloc(&go, sizeof(unsigned), cudaHostAllocMapped) !=
          cudaSuccess ||
      cudaHostAlloc(&stamp, (kRounds + 2) * sizeof(unsigned long long),
                    cudaHostAllocMapped) != cudaSuccess) {
    cudaFreeHost(go);
    return c;
  }
  volatile unsigned *vgo = go;
  volatile unsigned long long *vstamp = stamp;
  *vgo = 0;
  for (unsigned i = 0; i < kRounds + 2; ++i)
    vstamp[i] = 0;
  cudaHostGetDevicePointer(reinterpret_cast<void **>(&dgo), go, 0);
  cudaHostGetDevicePointer(reinterpret_cast<void **>(&dstamp), stamp, 0);
  clockProbe<<<1, 1, 0, s>>>(dgo, dstamp, kRounds);
  long long best = std::numeric_limits<long long>::max();
  bool failed = cudaGetLastError() != cudaSuccess;
  for (unsigned i = 1; i <= kRounds && !failed; ++i) {
    // A gap between rounds: the device spins on `go` again by then.
    std::this_thread::sleep_for(std::chrono::microseconds(20));
    const Clock::time_point t0 = Clock::now();
    std::atomic_thread_fence(std::memory_order_seq_cst);
    *vgo = i;
    std::atomic_thread_fence(std::memory_order_seq_cst);
    Clock::time_point t1;
    if (!smpart_test::pollFor(kDeadlineS, [&] {
          t1 = Clock::now();
          return vstamp[i] != 0;
        })) {
      failed = true;
      break;
    }
    const long long rtt = hostNs(t1) - hostNs(t0);
    if (rtt < best) {
      best = rtt;
      c.offset_ns = static_cast<long long>(vstamp[i]) - (hostNs(t0) + rtt / 2);
      c.uncertainty_ns = rtt / 2.0;
      c.when = t1;
    }
  }
  *vgo = kRounds; // a failed round must not leave the kernel spinning
  failed = smpart_test::syncStream(s, kDeadlineS) != cudaSuccess || failed;
  if (!failed) {
    c.step_ns = vstamp[kRounds + 1];
    c.ok = true;
  }
  cudaFreeHost(go);
  cudaFreeHost(stamp);
  return c;
}

/// Prints the calibration of `fig`, and the drift since `before` when it
/// is a valid earlier calibration.
void printCalibration(const char *fig, const DeviceClock &c,
                      const DeviceClock &before = {}) {
  if (!c.ok) {
    std::printf("%s: clock calibration failed: device-clock figures skipped\n",
                fig);
    return;
  }
  std::printf("%s: host steady_clock -> %%globaltimer calibrated to +- %.2f us "
              "(best of 64 round trips; %%globaltimer step %llu ns)",
              fig, c.uncertainty_ns / 1000.0, c.step_ns);
  if (before.ok) {
    const double s =
        std::chrono::duration<double>(c.when - before.when).count();
    std::printf("; offset moved %.2f us in %.1f s since the last calibration",
                (c.offset_ns - before.offset_ns) / 1000.0, s);
  }
  std::printf("\n");
}

/// Waits (at most 1 s: the device acknowledges within microseconds of the
/// last CTA leaving) for the acknowledgement of `epoch`; its device time in
/// `ns`. False if it never came or a later epoch was acknowledged instead.
bool ackTime(const smpart::KernelHandle &h, std::uint32_t epoch,
             unsigned long long &ns) {
  std::uint32_t e = 0;
  const bool acked = smpart_test::pollFor(1.0, [&] {
    return h.acknowledgedAt(e, ns) && static_cast<std::int32_t>(e - epoch) >= 0;
  });
  return acked && e == epoch;
}

/// A knob change's device-clock latency in two parts: the host write to
/// the poll that made it the device copy (KernelHandle::publishedAt: the
/// poll interval, the PCIe read), and that to the acknowledgement (CTAs
/// finishing the chunks they hold, the acknowledgement scan).
struct KnobSplit {
  std::vector<double> reach, settle;

  /// After ackTime() found `epoch` acknowledged at `acked_ns`.
  void add(const smpart::KernelHandle &h, std::uint32_t epoch,
           unsigned long long acked_ns, long long written_ns) {
    std::uint32_t e = 0;
    unsigned long long published_ns = 0;
    if (!h.publishedAt(e, published_ns) || e != epoch)
      return;
    reach.push_back((static_cast<long long>(published_ns) - written_ns) /
                    1000.0);
    settle.push_back(static_cast<long long>(acked_ns - published_ns) / 1000.0);
  }
  void print(const char *figure) const {
    if (reach.empty())
      return;
    std::printf("%s, of which: the host write to the device copy (the "
                "poll, its PCIe read) p50 %.1f us, p99 %.1f us; the device "
                "copy to the acknowledgement (CTAs finishing their chunks, "
                "the scan) p50 %.1f us, p99 %.1f us (%zu trials)\n",
                figure, percentile(reach, 0.5), percentile(reach, 0.99),
                percentile(settle, 0.5), percentile(settle, 0.99),
                reach.size());
  }
};

/// Logical blocks that began after a knob change reached the device copy
/// (from BlockRecord::start_ns): a CTA that already took its next block
/// when the change arrived runs it to the end before it leaves, so these
/// are what the acknowledgement waits for beyond the blocks in progress.
struct LateStarts {
  std::vector<double> blocks, ctas, last_us;

  /// `rec` on the host: the records of one preempted trial, zeroed before
  /// its launch; `published_ns`: the device copy of the preemption.
  void add(const std::vector<BlockRecord> &rec,
           unsigned long long published_ns) {
    std::vector<unsigned> seen;
    unsigned long long last = 0, n = 0;
    for (const BlockRecord &r : rec)
      if (r.runs && r.start_ns > published_ns) {
        ++n;
        seen.push_back(r.cta);
        last = std::max(last, r.start_ns - published_ns);
      }
    std::sort(seen.begin(), seen.end());
    blocks.push_back(double(n));
    ctas.push_back(
        double(std::unique(seen.begin(), seen.end()) - seen.begin()));
    last_us.push_back(last / 1000.0);
  }
  void print(const char *figure, unsigned resident) const {
    if (blocks.empty())
      return;
    std::printf("%s, blocks begun after the device copy (taken before it "
                "arrived, or in the decision that raced with it): p50 %.0f, "
                "p99 %.0f per trial, by p50 %.0f of the %u resident CTAs; "
                "the last of them began p50 %.1f us, p99 %.1f us after the "
                "copy (%zu trials)\n",
                figure, percentile(blocks, 0.5), percentile(blocks, 0.99),
                percentile(ctas, 0.5), resident, percentile(last_us, 0.5),
                percentile(last_us, 0.99), blocks.size());
  }
};

/// What (d) records: writes of the controller's knob calls made while it
/// handles one onKnobsApplied event on the notice thread.
struct ReactionLog {
  std::mutex mu;
  struct Event {
    unsigned long long acked_ns; ///< the acknowledgement, device clock
    Clock::time_point entry;     ///< onKnobsApplied reached the observer
    Clock::time_point write;     ///< the first knob write it caused
  };
  std::vector<Event> events;
  unsigned long long without_write = 0;
};

/// Set on the notice thread while the controller handles onKnobsApplied:
/// knob writes stamped then are that event's reaction.
thread_local bool t_in_event = false;
thread_local Clock::time_point t_first_write;
thread_local unsigned long long t_event_kernel = 0;

/// smpart's own KernelHandle adaptor (smpart::controlOf), plus the time
/// each knob write returns: the write is in host-mapped memory by then.
class TimedControl : public smpart::KernelControl {
public:
  explicit TimedControl(smpart::KernelHandle h)
      : id_(h.id()), c_(smpart::controlOf(std::move(h))) {}
  unsigned long long id() const override { return c_->id(); }
  std::string name() const override { return c_->name(); }
  unsigned occupancy() const override { return c_->occupancy(); }
  smpart::Status setSmMask(const smpart::SmMask &m) override {
    return stamp(c_->setSmMask(m));
  }
  smpart::Status setCtasPerSm(unsigned n) override {
    return stamp(c_->setCtasPerSm(n));
  }
  smpart::Status setBypassCtasPerSm(unsigned n) override {
    return stamp(c_->setBypassCtasPerSm(n));
  }
  smpart::Status preempt() override { return stamp(c_->preempt()); }
  smpart::Status setKnobs(const smpart::KnobSet &k) override {
    return stamp(c_->setKnobs(k));
  }
  smpart::Status resume() override { return stamp(c_->resume()); }
  smpart::Status grow() override { return c_->grow(); }
  smpart::Status progress(smpart::ControlProgress &out) const override {
    return c_->progress(out);
  }
  bool knobsApplied() const override { return c_->knobsApplied(); }

private:
  smpart::Status stamp(smpart::Status st) {
    // Only a write to another kernel is a grant that waited for the
    // acknowledging one.
    if (t_in_event && id_ != t_event_kernel &&
        t_first_write == Clock::time_point())
      t_first_write = Clock::now();
    return st;
  }
  unsigned long long id_;
  std::shared_ptr<smpart::KernelControl> c_;
};

class ReactionObserver : public smpart::LaunchObserver {
public:
  ReactionObserver(std::shared_ptr<smpart::Controller> c,
                   std::shared_ptr<ReactionLog> log)
      : c_(std::move(c)), log_(std::move(log)) {}
  void onLaunch(const smpart::KernelHandle &h) override {
    if (h.valid() && !h.opaque())
      c_->onArrival(std::make_shared<TimedControl>(h));
  }
  void onLastBlockTaken(const smpart::KernelHandle &h) override {
    c_->onLastBlockTaken(h.id());
  }
  void onKnobsApplied(const smpart::KernelHandle &h) override {
    const Clock::time_point entry = Clock::now();
    t_in_event = true;
    t_event_kernel = h.id();
    t_first_write = Clock::time_point();
    c_->onKnobsApplied(h.id());
    t_in_event = false;
    std::uint32_t e = 0;
    unsigned long long ns = 0;
    std::lock_guard<std::mutex> lock(log_->mu);
    if (t_first_write != Clock::time_point() && h.acknowledgedAt(e, ns))
      log_->events.push_back({ns, entry, t_first_write});
    else
      ++log_->without_write;
  }
  void onDone(const smpart::KernelHandle &h) override {
    c_->onDeparture(h.id());
  }

private:
  std::shared_ptr<smpart::Controller> c_;
  // Shared: the notice thread may still hold this observer for a moment
  // after it is replaced.
  std::shared_ptr<ReactionLog> log_;
};

/// (d): kernel A runs on every SM; B arrives, the controller (policy
/// `even`, no profiles) shrinks A to half and B's half waits for A's
/// acknowledgement; the grant goes out from the notice thread's
/// onKnobsApplied. Reaction: A's acknowledgement (acked_ns, device clock)
/// to the grant's first knob write (host clock moved onto the device's).
void controllerReaction(cudaStream_t s, const smpart::DeviceInfo &info,
                        BlockRecord *rec, float *out, unsigned blocks,
                        unsigned threads, unsigned long long block_ns,
                        const DeviceClock &before) {
  const char *fig = "(d) controller reaction";
  if (skipHung(fig))
    return;
  const smpart::policy::Policy *even = smpart::policy::findPolicy("even");
  if (!even || info.sm_ids.empty()) {
    std::printf("%s: skipped: %s\n", fig,
                even ? "SM ids not probed" : "policy `even` not found");
    return;
  }
  const DeviceClock clock = calibrate(s);
  printCalibration(fig, clock, before);
  if (!clock.ok)
    return;
  smpart::ControllerOptions options;
  options.warn = [](const std::string &) {}; // unprofiled kernels: expected
  auto controller = std::make_shared<smpart::Controller>(
      *even, smpart::policy::ProfileSet{}, info.sm_ids, options);
  auto shared_log = std::make_shared<ReactionLog>();
  ReactionLog &log = *shared_log;
  smpart::setLaunchObserver(
      std::make_shared<ReactionObserver>(controller, shared_log));
  cudaStream_t s2;
  cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking);
  constexpr int kTrials = 50;
  for (int t = 0; t < kTrials && g_hung.empty(); ++t) {
    smpart::KernelHandle a =
        smpart_test::launchRecord(dim3(blocks), threads, s, rec, out, block_ns);
    smpart::Progress p;
    if (!smpart_test::pollFor(
            kDeadlineS, [&] { return a.progress(p).ok() && p.taken > 0; })) {
      fail(fig, smpart_test::timedOut(a, "start", kDeadlineS).message(), true);
      break;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200 + 37 * (t % 10)));
    smpart::KernelHandle b = smpart_test::launchRecord(
        dim3(blocks / 4), threads, s2, rec, out, block_ns);
    smpart::Status st = smpart_test::waitKernel(a, kDeadlineS);
    if (st.ok())
      st = smpart_test::waitKernel(b, kDeadlineS);
    if (!st.ok()) {
      fail(fig, "trial " + std::to_string(t) + ": " + st.message(),
           st.cudaError() == cudaErrorTimeout);
      break;
    }
  }
  smpart::setLaunchObserver(nullptr);
  cudaStreamDestroy(s2);
  std::vector<double> total, notice, decide;
  {
    std::lock_guard<std::mutex> lock(log.mu);
    for (const ReactionLog::Event &e : log.events) {
      total.push_back(
          (clock.toDevice(e.write) - static_cast<long long>(e.acked_ns)) /
          1000.0);
      notice.push_back(
          (clock.toDevice(e.entry) - static_cast<long long>(e.acked_ns)) /
          1000.0);
      decide.push_back(
          std::chrono::duration<double, std::micro>(e.write - e.entry).count());
    }
  }
  if (total.empty()) {
    std::printf("%s: no grant waited for an acknowledgement in %d trials "
                "(%llu acknowledgements without a write)\n",
                fig, kTrials, log.without_write);
    return;
  }
  std::printf(
      "(d) controller reaction, device clock (a kernel's acknowledgement to "
      "the knob write of the grant that waited for it), %zu events: p50 %.1f "
      "us, p99 %.1f us (target p99 <= 20 us; +- %.1f us calibration); of "
      "which the notice thread seeing it: p50 %.1f us, p99 %.1f us, and the "
      "controller's decision (host clock): p50 %.1f us, p99 %.1f us\n",
      total.size(), percentile(total, 0.5), percentile(total, 0.99),
      clock.uncertainty_ns / 1000.0, percentile(notice, 0.5),
      percentile(notice, 0.99), percentile(decide, 0.5),
      percentile(decide, 0.99));
}

#if defined(SMPART_BENCH_INPUTS)
// (a) on the test_inputs/ kernels: each file's own host launcher, original
// (gpu_orig_<file>) against rewritten (gpu_xf_<file>, through
// smpart::launch), timed with events on the default stream, interleaved,
// median of `reps`; a 0.3 ms kernel ahead of each timed launch keeps the
// host's enqueuing out of the interval. Sizes give each launcher enough blocks
// to fill an H200 many times over, except where the file's launcher fixes a
// small grid (marked "fixed grid").
template <class T> struct Buf {
  T *p = nullptr;
  std::size_t n = 0;
  explicit Buf(std::size_t count, const std::vector<T> &init = {}) : n(count) {
    if (cudaMalloc(&p, n * sizeof(T)) != cudaSuccess) {
      p = nullptr;
      return;
    }
    if (init.empty())
      cudaMemset(p, 0, n * sizeof(T));
    else
      cudaMemcpy(p, init.data(), n * sizeof(T), cudaMemcpyHostToDevice);
  }
  ~Buf() { cudaFree(p); }
  operator T *() const { return p; }
};

std::vector<float> ramp(std::size_t n, float scale) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = 1.0f + static_cast<float>((i * 7) % 23) * scale;
  return v;
}

std::vector<int> iramp(std::size_t n, int mod) {
  std::vector<int> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = static_cast<int>((i * 37) % mod);
  return v;
}

struct Overhead {
  double log_sum = 0, worst = 0;
  const char *worst_name = "";
  int cases = 0, failed = 0;
};

/// Times one kernel both ways; `reset` (untimed) runs before every launch.
/// Silent once a kernel hung: inputsOverhead() says why the rest is skipped.
void timeInputKernel(Overhead &o, const char *name,
                     const std::function<void()> &reset,
                     const std::function<void()> &original,
                     const std::function<void()> &rewritten, int reps = 21) {
  if (!g_hung.empty())
    return;
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  std::vector<double> t_orig, t_xf;
  cudaError_t waited = cudaSuccess;
  auto once = [&](const std::function<void()> &launch) {
    if (waited != cudaSuccess)
      return 0.0;
    if (reset)
      reset();
    // The events time the kernels, not the host paths that enqueue them
    // (smpart::launch's is longer): the GPU is busy while the host works.
    holdStream<<<1, 1>>>(300000);
    cudaEventRecord(a, 0);
    launch();
    cudaEventRecord(b, 0);
    waited = smpart_test::syncEvent(b, kDeadlineS);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    return double(ms);
  };
  once(original); // warm-up (module load, runtime pools, occupancy query)
  once(rewritten);
  for (int i = 0; i < reps && waited == cudaSuccess; ++i) {
    t_orig.push_back(once(original));
    t_xf.push_back(once(rewritten));
  }
  if (waited == cudaSuccess) // the launchers' own work on the default stream
    waited = smpart_test::syncStream(0, kDeadlineS);
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  if (waited != cudaSuccess) {
    fail(std::string("  ") + name, cudaWhy(waited), waited == cudaErrorTimeout);
    ++o.failed;
    return;
  }
  const cudaError_t e = cudaGetLastError();
  const smpart::Status st = smpart::getLastError();
  if (e != cudaSuccess || !st.ok()) {
    std::printf("  %-34s error: %s\n", name,
                e != cudaSuccess ? cudaGetErrorString(e)
                                 : st.message().c_str());
    return;
  }
  const double orig = percentile(t_orig, 0.5), xf = percentile(t_xf, 0.5);
  const double r = xf / orig;
  std::printf("  %-34s original %8.3f ms, rewritten %8.3f ms, ratio %.3f\n",
              name, orig, xf, r);
  o.log_sum += std::log(r);
  if (r > o.worst) {
    o.worst = r;
    o.worst_name = name;
  }
  ++o.cases;
}

#define BOTH(file, ...)                                                        \
  [&] { gpu_orig_##file::__VA_ARGS__; }, [&] { gpu_xf_##file::__VA_ARGS__; }

void inputsOverhead() {
  std::printf(
      "(a) overhead on the test_inputs/ kernels (ratio rewritten/original)\n");
  Overhead o;
  const std::function<void()> none;
  cudaStream_t s0 = 0; // launchers taking a stream get the default stream
  // Each group's buffers are filled on the default stream, behind a kernel
  // that may not have finished: no group starts after one hung.
  auto hung = [] { return skipHung("  remaining (a) kernels"); };
  {
    const int n = 1 << 25;
    Buf<float> x(n, ramp(n, 0.5f)), y(n, ramp(n, 1.f)), out(n),
        off(13, ramp(13, 0.25f));
    timeInputKernel(o, "vector_ops saxpy", none,
                    BOTH(vector_ops, launch_saxpy(n, 2.f, x, y, s0)));
    timeInputKernel(o, "vector_ops vector_add", none,
                    BOTH(vector_ops, launch_vector_add(x, y, out, n)));
    timeInputKernel(
        o, "vector_ops scale_offset", none,
        BOTH(vector_ops, launch_scale_offset(x, off, 13, 3.f, out, n)));
    timeInputKernel(
        o, "stencil2d jacobi_count_changed", none,
        BOTH(stencil2d, launch_jacobi_count_changed(
                            x, y, n, 1.f, reinterpret_cast<int *>(out.p))));
    timeInputKernel(
        o, "template_kernel axpby<float>", none,
        BOTH(template_kernel, launch_axpby_f32(1.5f, x, -0.5f, y, n)));
    timeInputKernel(
        o, "template_kernel clamp_copy<512>", none,
        BOTH(template_kernel, launch_clamp_copy(x, out, 2.f, 8.f, n, s0)));
    timeInputKernel(o, "template_kernel block_sum<float,256>", none,
                    BOTH(template_kernel, launch_block_sum_f32(x, out, n, s0)));
    timeInputKernel(
        o, "grid_stride saxpy_grid_stride", none,
        BOTH(grid_stride, launch_saxpy_grid_stride(n, 2.f, x, y, s0)));
    timeInputKernel(o, "grid_stride scale_clamp (fixed grid)", none,
                    BOTH(grid_stride, launch_scale_clamp(y, n, 1.0001f)));
    timeInputKernel(
        o, "grid_stride scale_clamp lo,hi (fixed)", none,
        BOTH(grid_stride, launch_scale_clamp_range(y, n, 1.0001f, 0.f, 2.f)));
    timeInputKernel(
        o, "grid_stride count_above (fixed grid)", none,
        BOTH(grid_stride, launch_count_above(
                              x, n, 5.f, reinterpret_cast<unsigned *>(out.p))));
    timeInputKernel(o, "reduction reduce_sum", none,
                    BOTH(reduction, launch_reduce_sum(x, out, n, 256, s0)));
    timeInputKernel(
        o, "histogram histogram_range", none,
        BOTH(histogram,
             launch_histogram_range(x, n, 1.f, 10.f, 100,
                                    reinterpret_cast<int *>(out.p),
                                    reinterpret_cast<int *>(out.p) + 200, s0)));
    Buf<float> stock(n, ramp(n, 1.f)), strike(n, ramp(n, 0.9f)),
        years(n, ramp(n, 0.05f));
    timeInputKernel(
        o, "black_scholes black_scholes", none,
        BOTH(black_scholes, launch_black_scholes(out, y, stock, strike, years,
                                                 0.02f, 0.3f, n)));
  }
  if (hung())
    return;
  {
    const int n = 1 << 25;
    Buf<int> in(n, iramp(n, 100003)), out(n), iy(n), result(1);
    timeInputKernel(o, "reduction reduce_min_int (fixed 120)", none,
                    BOTH(reduction, launch_reduce_min_int(in, n, result, s0)));
    timeInputKernel(o, "template_kernel block_sum<int,128>", none,
                    BOTH(template_kernel, launch_block_sum_i32(in, out, n)));
    timeInputKernel(o, "template_kernel axpby<int>", none,
                    BOTH(template_kernel, launch_axpby_i32(3, in, -2, iy, n)));
    timeInputKernel(o, "prefix_scan scan_block_exclusive", none,
                    BOTH(prefix_scan,
                         launch_scan_block_exclusive(in, out, iy, n, 256, s0)));
    timeInputKernel(
        o, "prefix_scan scan_add_offsets", none,
        BOTH(prefix_scan, launch_scan_add_offsets(out, in, n, 256, s0)));
    std::vector<unsigned char> bytes(n);
    for (int i = 0; i < n; ++i)
      bytes[i] = static_cast<unsigned char>((i * 131u + i / 7) % 256u);
    Buf<unsigned char> data(n, bytes);
    timeInputKernel(
        o, "histogram histogram256", none,
        BOTH(histogram,
             launch_histogram256(data, n, reinterpret_cast<unsigned *>(out.p),
                                 4096)));
  }
  if (hung())
    return;
  {
    const int M = 2048, N = 2048, K = 1024;
    Buf<float> A(size_t(M) * K, ramp(size_t(M) * K, 0.01f)),
        B(size_t(K) * N, ramp(size_t(K) * N, 0.02f)), C(size_t(M) * N);
    timeInputKernel(
        o, "sgemm_tiled sgemm_tiled", none,
        BOTH(sgemm_tiled, launch_sgemm_tiled(M, N, K, 1.f, A, B, 0.f, C, s0)));
    timeInputKernel(
        o, "sgemm_tiled sgemm_naive", none,
        BOTH(sgemm_tiled, launch_sgemm_naive(M, N, K, 1.f, A, B, 0.f, C)));
  }
  if (hung())
    return;
  {
    const int nx = 8192, ny = 4096;
    Buf<float> in(size_t(nx) * ny, ramp(size_t(nx) * ny, 1.f)),
        out(size_t(nx) * ny);
    timeInputKernel(
        o, "stencil2d jacobi5_shared", none,
        BOTH(stencil2d, launch_jacobi5_shared(in, out, nx, ny, 0.8f)));
    timeInputKernel(
        o, "stencil2d jacobi5_global", none,
        BOTH(stencil2d, launch_jacobi5_global(in, out, nx, ny, 0.8f, s0)));
    timeInputKernel(
        o, "transpose transpose_tiled", none,
        BOTH(transpose, launch_transpose_tiled(in, out, nx, ny, s0)));
    timeInputKernel(o, "transpose transpose_naive", none,
                    BOTH(transpose, launch_transpose_naive(in, out, nx, ny)));
    timeInputKernel(o, "grid_stride copy2d (fixed grid)", none,
                    BOTH(grid_stride, launch_copy2d_grid_stride(
                                          in, out, ny, nx - 64, nx, nx)));
    const int vx = 512, vy = 256, vz = 256;
    timeInputKernel(
        o, "block_helper volume_scale3d", none,
        BOTH(block_helper, launch_volume_scale3d(in, out, vx, vy, vz, 1.5f)));
    timeInputKernel(
        o, "block_helper laplacian3d", none,
        BOTH(block_helper, launch_laplacian3d(in, out, vx, vy, vz, s0)));
    const dim3 grid(128, 64, 16), block(8, 4, 2); // 131072 blocks of 64
    Buf<unsigned> tb(size_t(128) * 64 * 16 * 64), coords(3 * 128 * 64 * 16),
        info(2);
    timeInputKernel(o, "block_helper record_block_ids", none,
                    BOTH(block_helper, launch_record_block_ids(
                                           grid, block, tb, coords, info, s0)));
  }
  if (hung())
    return;
  {
    const int n = 1 << 15;
    std::vector<float4> p(n);
    for (int i = 0; i < n; ++i)
      p[i] = make_float4((i * 7) % 23 * 0.5f, (i * 5) % 17 * 0.5f,
                         (i * 3) % 11 * 0.5f, 1.f + i % 4);
    Buf<float4> pos(n, p), vel(n, p), acc(n);
    Buf<float2> energy(n);
    timeInputKernel(o, "nbody nbody_forces", none,
                    BOTH(nbody, launch_nbody_forces(pos, acc, n, 0.01f, s0)));
    const int m = 1 << 24;
    Buf<float4> pos2(m), vel2(m), acc2(m);
    Buf<float2> energy2(m);
    timeInputKernel(o, "nbody nbody_integrate", none,
                    BOTH(nbody, launch_nbody_integrate(pos2, vel2, acc2, m,
                                                       0.01f, 0.99f, s0)));
    timeInputKernel(o, "nbody nbody_energy", none,
                    BOTH(nbody, launch_nbody_energy(pos2, vel2, energy2, m)));
  }
  if (hung())
    return;
  {
    const int rows = 1 << 22, cols = 1 << 20;
    std::vector<int> rp{0}, ci;
    std::vector<float> va;
    for (int r = 0; r < rows; ++r) {
      const int len = r % 5 == 0 ? 0 : 1 + (r * 7) % 12;
      for (int j = 0; j < len; ++j) {
        ci.push_back(static_cast<int>((r * 13ll + j * 2909ll) % cols));
        va.push_back(0.25f * ((r + j) % 9) - 1.f);
      }
      rp.push_back(static_cast<int>(ci.size()));
    }
    Buf<int> row_ptr(rp.size(), rp), col_idx(ci.size(), ci), lengths(rows),
        empty(1);
    Buf<float> vals(va.size(), va), x(cols, ramp(cols, 0.5f)), y(rows);
    timeInputKernel(
        o, "spmv_csr sparse::spmv_csr_scalar", none,
        BOTH(spmv_csr,
             launch_spmv_csr_scalar(rows, row_ptr, col_idx, vals, x, y, s0)));
    timeInputKernel(
        o, "spmv_csr sparse::spmv_csr_axpby", none,
        BOTH(spmv_csr, sparse::launch_spmv_csr_axpby(
                           rows, 1.5f, row_ptr, col_idx, vals, x, 0.5f, y)));
    timeInputKernel(
        o, "spmv_csr csr_row_lengths", none,
        BOTH(spmv_csr, launch_csr_row_lengths(rows, row_ptr, lengths, empty)));
  }
  if (hung())
    return;
  {
    const int n = 1 << 21, k = 16, dim = 8;
    Buf<float> points(size_t(n) * dim, ramp(size_t(n) * dim, 0.5f)),
        centroids(k * dim, ramp(k * dim, 1.3f));
    Buf<int> membership(n), changed(1), counts(k);
    auto reset = [&] { cudaMemsetAsync(membership, 0, n * sizeof(int), 0); };
    timeInputKernel(
        o, "kmeans_assign kmeans_assign", reset,
        BOTH(kmeans_assign, launch_kmeans_assign(points, centroids, n, k, dim,
                                                 membership, changed, s0)));
    timeInputKernel(
        o, "kmeans_assign kmeans_count", none,
        BOTH(kmeans_assign, launch_kmeans_count(membership, n, k, counts)));
    timeInputKernel(
        o, "kmeans_assign kmeans_update (small grid)", none,
        BOTH(kmeans_assign, launch_kmeans_update(points, membership, 1 << 16, k,
                                                 dim, centroids)));
  }
  if (hung())
    return;
  {
    const int n = 1 << 22;
    std::vector<int> off{0}, adj, lv(n, -1), fr(n, 0);
    for (int v = 0; v < n; ++v) {
      for (int j = 0; j < v % 5; ++j)
        adj.push_back(static_cast<int>((v * 31ll + j * 7919ll + 1) % n));
      off.push_back(static_cast<int>(adj.size()));
    }
    for (int v = 0; v < n; v += 7) {
      fr[v] = 1;
      lv[v] = 1;
    }
    Buf<int> offsets(off.size(), off), cols(adj.size(), adj), levels(n, lv),
        frontier(n, fr), next(n), count(1);
    Buf<int> l0(n), f0(n), nf0(n); // bfs_init on its own arrays
    timeInputKernel(o, "bfs_frontier bfs_init", none,
                    BOTH(bfs_frontier, launch_bfs_init(n, 0, l0, f0, nf0)));
    auto reset = [&] {
      cudaMemcpyAsync(levels, lv.data(), n * sizeof(int),
                      cudaMemcpyHostToDevice, 0);
      cudaMemsetAsync(next, 0, n * sizeof(int), 0);
    };
    timeInputKernel(
        o, "bfs_frontier bfs_expand", reset,
        BOTH(bfs_frontier, launch_bfs_expand(n, offsets, cols, frontier, next,
                                             levels, 1, count, s0)));
    timeInputKernel(
        o, "bfs_frontier bfs_advance", none,
        BOTH(bfs_frontier, launch_bfs_advance(n, frontier, next, s0)));
  }
  if (hung())
    return;
  if (o.cases)
    std::printf("  %d kernels: geomean %.3f (target <= 1.03), worst %.3f %s "
                "(target <= 1.10)%s\n",
                o.cases, std::exp(o.log_sum / o.cases), o.worst, o.worst_name,
                o.failed ? " (failed kernels left out)" : "");
  std::printf(
      "  not measured: black_scholes OptionPricer::price_grid (static member "
      "kernel, Clang only; nvcc rejects it)\n");
}
#endif // SMPART_BENCH_INPUTS

} // namespace

int main() {
  // Lines reach the report as they are printed: a stage killed at its
  // deadline keeps every figure printed before.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    std::printf("no GPU: skipped (%s)\n",
                e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
    return 0;
  }
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  const unsigned threads = 128;
  const unsigned max_blocks = sms * 16 * 200;
  BlockRecord *rec;
  float *out;
  if (!ok(cudaMalloc(&rec, max_blocks * sizeof(BlockRecord)), "cudaMalloc") ||
      !ok(cudaMalloc(&out, size_t(max_blocks) * threads * sizeof(float)),
          "cudaMalloc"))
    return 1;

#if defined(SMPART_BENCH_INPUTS)
  inputsOverhead();
#else
  std::printf("(a) test_inputs/ kernels: not built (needs smpart-transform)\n");
#endif

  // (a') the same on the synthetic recording kernel.
  std::printf(
      "(a') overhead on the recording kernel (ratio rewritten/original)\n");
  const char *fig_a2 = "(a') recording kernel";
  double log_sum = 0, worst = 0;
  int cases = 0;
  for (unsigned long long spin : {0ull, 2000ull}) {
    // Where the ratio comes from: the extra time of a launch (the
    // intercept of time against blocks) and the extra time of a block (the
    // slope), from the smallest and the largest grid.
    struct Point {
      unsigned blocks;
      double orig, xf;
    };
    std::vector<Point> points;
    for (unsigned blocks :
         {unsigned(sms) * 16u, unsigned(sms) * 16u * 20u, max_blocks}) {
      if (!g_hung.empty())
        break;
      const double orig = medianMs(fig_a2, s, 15, [&] {
        smpart_test::recordOriginal<<<blocks, threads, 0, s>>>(rec, out, spin);
      });
      if (std::isnan(orig))
        break;
      const double xf = medianMs(fig_a2, s, 15, [&] {
        smpart_test::launchRecord(dim3(blocks), threads, s, rec, out, spin);
      });
      if (std::isnan(xf))
        break;
      const double r = xf / orig;
      std::printf("  record blocks=%u spin=%lluns: original %.3f ms, rewritten "
                  "%.3f ms, ratio %.3f\n",
                  blocks, spin, orig, xf, r);
      log_sum += std::log(r);
      worst = std::max(worst, r);
      ++cases;
      points.push_back({blocks, orig, xf});
    }
    if (points.size() == 3) {
      const Point &a = points.front(), &b = points.back();
      const double per_block = (b.xf - a.xf) / (b.orig - a.orig);
      const double per_launch_us =
          1000 * ((a.xf - a.orig) - (per_block - 1) * a.orig);
      std::printf("  spin=%lluns: per block %.3f of the original's time "
                  "(slope, %u -> %u blocks), per launch %+.1f us "
                  "(intercept)\n",
                  spin, per_block, a.blocks, b.blocks, per_launch_us);
    }
  }
  if (cases == 6)
    std::printf(
        "  geomean %.3f (target <= 1.03), worst %.3f (target <= 1.10)\n",
        std::exp(log_sum / cases), worst);
  launchCostSplit(s, unsigned(sms), out);

  // (b) preemption latency against the logical-block time.
  const char *fig_b = "(b) preemption latency";
  const unsigned long long block_ns = 20000;
  const unsigned lat_blocks = sms * 16 * 100;
  std::vector<double> lat, lat_dev;
  KnobSplit split_b;
  LateStarts late_b;
  unsigned resident_b = 0; // CTAs of the kernel, all resident at once
  std::vector<BlockRecord> host_rec;
  cudaStream_t side = nullptr; // reads the records of a preempted kernel
  cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking);
  double block_us = 0;
  DeviceClock clock_b;
  if (!skipHung(fig_b)) {
    clock_b = calibrate(s);
    printCalibration(fig_b, clock_b);
    const double full_ms = medianMs(fig_b, s, 3, [&] {
      smpart_test::launchRecord(dim3(lat_blocks), threads, s, rec, out,
                                block_ns);
    });
    // The occupancy the runtime computed, from a one-block launch (not
    // behind a kernel that missed its deadline).
    smpart::KernelHandle probe;
    if (!std::isnan(full_ms)) {
      probe = smpart_test::launchRecord(dim3(1), threads, s, rec, out, 0);
      const smpart::Status probed = smpart_test::waitKernel(probe, kDeadlineS);
      if (!probed.ok())
        fail(fig_b, "probe: " + probed.message(),
             probed.cudaError() == cudaErrorTimeout);
    }
    const unsigned occ = probe.occupancy();
    resident_b = unsigned(std::min<unsigned long long>(
        lat_blocks, static_cast<unsigned long long>(sms) * occ));
    block_us = full_ms * 1000.0 *
               std::min<double>(lat_blocks, double(sms) * occ) / lat_blocks;
    // The same grid unrewritten: whether a block's time beyond its spin is
    // the protocol's or the spin's own (all CTAs reading %globaltimer).
    const double orig_ms = medianMs(fig_b, s, 3, [&] {
      smpart_test::recordOriginal<<<lat_blocks, threads, 0, s>>>(rec, out,
                                                                 block_ns);
    });
    if (!std::isnan(orig_ms))
      std::printf("(b) mean logical block of its kernel (%llu us spin): "
                  "original %.1f us, rewritten %.1f us, at %u CTAs per SM\n",
                  block_ns / 1000,
                  orig_ms * 1000.0 * double(sms) * occ / lat_blocks, block_us,
                  occ);
    for (int t = 0; t < 100 && g_hung.empty() && !std::isnan(full_ms); ++t) {
      cudaMemsetAsync(rec, 0, lat_blocks * sizeof(BlockRecord), s);
      smpart::KernelHandle h = smpart_test::launchRecord(
          dim3(lat_blocks), threads, s, rec, out, block_ns);
      std::this_thread::sleep_for(
          std::chrono::microseconds(500 + 37 * (t % 10)));
      const Clock::time_point t0 = Clock::now();
      h.preempt();
      const std::uint32_t epoch = h.knobs().epoch;
      smpart::Status st = smpart_test::drainKernel(h, kDeadlineS);
      const double us = usSince(t0);
      // The preempt epoch is acknowledged once no CTA but the parked
      // anchor holds a slot: the device's time of the last CTA gone, late
      // by at most the acknowledgement scan (ceil(SMs / 32) polls).
      unsigned long long acked_ns = 0;
      if (st.ok() && clock_b.ok && ackTime(h, epoch, acked_ns)) {
        lat_dev.push_back(
            (static_cast<long long>(acked_ns) - clock_b.toDevice(t0)) / 1000.0);
        split_b.add(h, epoch, acked_ns, clock_b.toDevice(t0));
        // The preempted kernel (its parked anchor) still runs on `s`: the
        // records are read on another stream. Blocks that finished before
        // the acknowledgement are all in L2 by then.
        std::uint32_t e = 0;
        unsigned long long published_ns = 0;
        host_rec.resize(lat_blocks);
        if (h.publishedAt(e, published_ns) && e == epoch &&
            cudaMemcpyAsync(host_rec.data(), rec,
                            lat_blocks * sizeof(BlockRecord),
                            cudaMemcpyDeviceToHost, side) == cudaSuccess &&
            smpart_test::syncStream(side, kDeadlineS) == cudaSuccess)
          late_b.add(host_rec, published_ns);
      }
      h.resume(); // also when the drain failed: let the kernel finish
      if (st.ok())
        st = smpart_test::waitKernel(h, kDeadlineS);
      if (!st.ok()) {
        fail(fig_b, "trial " + std::to_string(t) + ": " + st.message(),
             st.cudaError() == cudaErrorTimeout);
        break;
      }
      lat.push_back(us);
    }
  }
  // K = 1: each 20 us block is longer than the 8 us chunk target, so the
  // chunk never grows past one block.
  if (lat.size() == 100 && !lat_dev.empty()) {
    const double p50 = percentile(lat_dev, 0.5),
                 p99 = percentile(lat_dev, 0.99);
    std::printf(
        "(b) preemption latency, device clock (preempt() call to the "
        "device's acknowledgement that every CTA but the anchor is gone), "
        "over %zu trials: p50 %.1f us, p99 %.1f us (+- %.1f us calibration); "
        "mean logical block %.1f us, K = 1 block per chunk (blocks longer "
        "than the 8 us chunk target); p99 / (K blocks + 20 us) = %.2f "
        "(target <= 1)\n",
        lat_dev.size(), p50, p99, clock_b.uncertainty_ns / 1000.0, block_us,
        p99 / (block_us + 20.0));
    split_b.print("(b) preemption latency, device clock");
    late_b.print("(b) preemption latency, device clock", resident_b);
  } else if (lat.size() == 100) {
    std::printf("(b) preemption latency, device clock: not measured (%s)\n",
                clock_b.ok ? "no acknowledgement of the preempt epoch"
                           : "clock calibration failed");
  }
  if (lat.size() == 100) {
    const double p50 = percentile(lat, 0.5), p99 = percentile(lat, 0.99);
    std::printf(
        "(b) preemption latency, host-observed (preempt() to drain() "
        "returning: includes the host's polling of the progress mirror) over "
        "100 trials: p50 %.1f us, p99 %.1f us; p99 / (K blocks + 20 us) = "
        "%.2f\n",
        p50, p99, p99 / (block_us + 20.0));
  }

  // (c) knob latency: a mask change to the first CTA leaving a removed SM
  // (seen as resident CTAs dropping in the device's progress mirror), and
  // the time until the kernel is confined to half the SMs.
  const char *fig_c = "(c) knob latency";
  smpart::DeviceInfo info;
  smpart::deviceInfo(info);
  std::vector<double> first_leave, conf, acked, acked_dev;
  KnobSplit split_c;
  const unsigned half = sms / 2;
  const bool run_c = !skipHung(fig_c);
  DeviceClock clock_c;
  if (run_c) {
    clock_c = calibrate(s);
    printCalibration(fig_c, clock_c, clock_b);
  }
  unsigned long long strong_fetches = 0;
  for (int t = 0; run_c && t < 100 && g_hung.empty(); ++t) {
    smpart::KernelHandle h = smpart_test::launchRecord(
        dim3(lat_blocks), threads, s, rec, out, block_ns);
    const unsigned occ = h.occupancy();
    smpart::Progress p;
    if (!smpart_test::pollFor(kDeadlineS, [&] {
          return h.progress(p).ok() &&
                 p.resident_ctas >= unsigned(sms) * occ / 2;
        })) {
      fail(fig_c,
           "trial " + std::to_string(t) +
               ": never had half its CTAs resident: " +
               smpart_test::timedOut(h, "start", kDeadlineS).message(),
           true);
      break;
    }
    const unsigned before = p.resident_ctas;
    const Clock::time_point t0 = Clock::now();
    h.setSmMask(smpart::smSet(info, 0, half));
    const std::uint32_t epoch = h.knobs().epoch;
    bool left = false, ack = false;
    double confined = -1;
    do {
      h.progress(p);
      if (!left && p.resident_ctas < before) {
        first_leave.push_back(usSince(t0));
        left = true;
      }
      if (!ack && h.knobsApplied()) {
        acked.push_back(usSince(t0));
        ack = true;
      }
      if (confined < 0 && p.resident_ctas <= half * h.knobs().ctas_per_sm)
        confined = usSince(t0);
    } while ((confined < 0 || !ack) && usSince(t0) < 1e6);
    conf.push_back(confined < 0 ? usSince(t0) : confined);
    unsigned long long acked_ns = 0;
    if (ack && clock_c.ok && ackTime(h, epoch, acked_ns)) {
      acked_dev.push_back(
          (static_cast<long long>(acked_ns) - clock_c.toDevice(t0)) / 1000.0);
      split_c.add(h, epoch, acked_ns, clock_c.toDevice(t0));
    }
    h.setSmMask(smpart::smSet(info, 0, sms));
    if (const smpart::Status st = smpart_test::waitKernel(h, kDeadlineS);
        !st.ok()) {
      fail(fig_c, "trial " + std::to_string(t) + ": " + st.message(),
           st.cudaError() == cudaErrorTimeout);
      break;
    }
    if (h.progress(p).ok())
      strong_fetches += p.strong_fetches;
  }
  if (conf.size() == 100 && !first_leave.empty())
    std::printf(
        "(c) knob latency, mask change to the first CTA leaving a removed SM: "
        "p50 %.1f us, p99 %.1f us (target p99 <= 20 us); confined to %u of %d "
        "SMs: "
        "p50 %.1f us, p99 %.1f us; SM ids probed: %s\n",
        percentile(first_leave, 0.5), percentile(first_leave, 0.99), half, sms,
        percentile(conf, 0.5), percentile(conf, 0.99),
        info.sm_ids_probed ? "yes" : "no");
  if (conf.size() == 100)
    std::printf("(c) knob copies read again at system scope (the fast, weak "
                "copy was stale or torn): %llu in 200 knob changes; many "
                "means this GPU caches host memory\n",
                strong_fetches);
  if (conf.size() == 100 && !acked_dev.empty())
    std::printf(
        "(c') acknowledgement, device clock (setSmMask() call to the device's "
        "acknowledgement: the removed SMs may go to another kernel): p50 %.1f "
        "us, p99 %.1f us (target p99 <= 20 us; +- %.1f us calibration) over "
        "%zu trials; a CTA on a removed SM first ends the block it holds: "
        "p99 / (K blocks + 20 us) = %.2f with K = 1 block of %.1f us\n",
        percentile(acked_dev, 0.5), percentile(acked_dev, 0.99),
        clock_c.uncertainty_ns / 1000.0, acked_dev.size(),
        percentile(acked_dev, 0.99) / (block_us + 20.0), block_us);
  if (conf.size() == 100)
    split_c.print("(c') acknowledgement, device clock");
  if (conf.size() == 100 && !acked.empty())
    std::printf(
        "(c') acknowledgement, host-observed (mask change to knobsApplied() "
        "seen true): p50 %.1f us, p99 %.1f us over %zu trials\n",
        percentile(acked, 0.5), percentile(acked, 0.99), acked.size());
  controllerReaction(s, info, rec, out, lat_blocks, threads, block_ns, clock_c);
  smpart::Status st = smpart::getLastError();
  if (!st.ok())
    std::printf("runtime error: %s\n", st.message().c_str());
  if (g_failures == 0)
    return 0;
  std::printf("bench-gpu: %d figure(s) FAILED\n", g_failures);
  // A kernel that did not finish may still be running: the destructors of
  // the runtime and of CUDA could wait for it forever.
  std::fflush(stdout);
  std::_Exit(1);
}
