// GPU co-run benchmark: pairs and a quadruple of test_inputs/ kernels that
// mix memory-bound (saxpy, jacobi5_global) and compute-bound (sgemm_tiled,
// nbody_forces) work, each scenario run
//   - sequentially (each job alone, one after the other),
//   - as plain concurrent streams (the original kernels, one stream each),
//   - under smpart with the even, cd-search, hsm-fair, hsm-qos and greedy
//     policies and the online cd-search-online, hsm-fair-online,
//     hsm-qos-online and tlp-dynamic, whose epochs an smpart::EpochTimer
//     closes (the rewritten kernels, one smpart::Controller in-process,
//     profiles measured at the start of this same run).
// A job is one kernel launched L times in a row on its own stream (L gives
// about 40 ms alone). Reported per scenario and mode, with the papers'
// definitions (NP_i = T_alone_i / T_corun_i):
//   STP = sum NP_i,  ANTT = mean 1/NP_i,  fairness = min NP_i / max NP_i,
// and the ratios STP/STP_streams, ANTT_streams/ANTT (> 1 is better) and
// fairness/fairness_streams, the plain-stream figures measured in this run.
//
// Profiles: by_sms (1/4, 1/2, 3/4, all SMs) and by_ctas_per_sm (1 ..
// occupancy) from fixed-size runs of each rewritten job alone, its SMs and
// CTAs set before its first block through a launch observer. The memory
// metrics CD-search and HSM need (LLC accesses per kilo-instruction, hit
// rate, bandwidth) come from an Nsight Compute CSV (`--ncu FILE`, written
// by `bench-corun --ncu-pass` run under ncu; .ci/gpu-run does both). A
// policy that still lacks an input falls back to `even`; the controller
// says so once and this benchmark prints it beside the row.
//
// Latency-critical co-location (controller README, "Latency-critical
// co-location"): a short kernel (nbody_forces on 16K bodies: inference)
// launched every period (1 ms, or five times its time alone if longer) on
// a stream of its own beside a long best-effort job (sgemm_tiled launched
// back to back, ~160 ms: training), as plain streams, as priority streams
// (cudaStreamCreateWithPriority: the short kernel's stream the greatest
// priority) and under smpart with the `priority` policy (rewritten kernels,
// plain streams), same run. Per mode: the short kernel's launch latency
// (its stream reaching the launch to its end, CUDA events) at p50 and p99
// against the original alone, and the best-effort job's throughput against
// the original alone; targets p99 <= 1.25x alone, best effort >= 60 %. It
// runs last, and only with 5 s of --max-seconds left (about 1.5 s of work).
//
// Without a GPU it prints "no GPU: skipped" and exits 0. Asserts nothing.
// Bounded: every wait has a deadline (kDeadlineS) and the whole run stops
// at --max-seconds (default 35: .ci/gpu-run's co-run stage has 45); a
// missed deadline or the time limit prints a FAILED or "stopped" line
// naming what was not measured, and the program exits 1 instead of hanging.
//   bench-corun [--ncu ncu.csv] [--trace-dir DIR] [--max-seconds S]
//   bench-corun --ncu-pass [--max-seconds S]
#include "bounded_wait.hpp"
#include "corun_common.cuh"
#include "corun_timing.cuh"
#include "gpu_inputs.hpp"

#include "online_policies.hpp"

#include "smpart/controller_runtime.hpp"
#include "smpart/policy/policy.hpp"
#include "smpart/profiler.hpp"
#include "smpart/trace.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace {

using smpart::policy::BlockShape;
using smpart_bench::Clock;
using smpart_bench::Event;
using smpart_bench::Figures;
using smpart_bench::figures;
using smpart_bench::gpuSpec;
using smpart_bench::kDeadlineS;
using smpart_bench::mergeNcu;

/// End of the run (--max-seconds), and why it stopped early: a wait that
/// timed out (its kernels may still hold the GPU), a CUDA error, or the
/// time limit. Once set, nothing more is launched.
smpart_bench::RunDeadline g_run;
std::string g_stopped;
bool g_hung = false;

/// False (after saying once why) when nothing more may be measured.
bool mayRun(const std::string &what) {
  if (g_stopped.empty() && g_run.secondsLeft() <= 0)
    g_stopped = "time limit (--max-seconds) reached";
  if (g_stopped.empty())
    return true;
  static bool said = false;
  if (!said)
    std::printf("stopped: %s; not measured from here on: %s\n",
                g_stopped.c_str(), what.c_str());
  said = true;
  return false;
}

bool ok(cudaError_t e, const char *what) {
  if (e != cudaSuccess)
    std::printf("error: %s: %s\n", what, cudaGetErrorString(e));
  return e == cudaSuccess;
}

/// Stops the run after `what` failed with `e`: a timeout (its kernels may
/// still hold the GPU) names the deadline it missed, `limit` seconds, and
/// `why` (what cut it short, or "").
void stopFailed(const std::string &what, cudaError_t e, double limit,
                const char *why) {
  if (e == cudaErrorTimeout) {
    std::printf("%s: FAILED: not finished within %.0f s%s\n", what.c_str(),
                limit, why);
    g_hung = true;
  } else {
    std::printf("%s: FAILED: %s: %s\n", what.c_str(), cudaGetErrorName(e),
                cudaGetErrorString(e));
  }
  g_stopped = what + " failed";
}

/// Waits for whatever came before (the buffers' copies); false, the run
/// stopped, when it did not finish.
bool earlierWorkDone(const std::string &what) {
  const cudaError_t e = smpart_test::syncStream(0, kDeadlineS);
  if (e == cudaSuccess)
    return true;
  std::printf("%s: FAILED: waiting for earlier work: %s\n", what.c_str(),
              cudaGetErrorName(e));
  g_stopped = what + " failed";
  g_hung = e == cudaErrorTimeout;
  return false;
}

/// One application of a scenario: a kernel launched `launches` times.
struct App {
  std::string kernel; ///< the name profiles and the runtime use
  const char *kind;   ///< "memory" or "compute"
  BlockShape block;
  std::function<void(bool rewritten, cudaStream_t)> launchOnce;
  int launches = 1;
};

template <class T> T *deviceArray(std::size_t n, float fill) {
  T *p = nullptr;
  if (!ok(cudaMalloc(&p, n * sizeof(T)), "cudaMalloc"))
    return nullptr;
  std::vector<T> h(n);
  for (std::size_t i = 0; i < n; ++i)
    std::memcpy(&h[i], &fill, std::min(sizeof(T), sizeof(float)));
  cudaMemcpy(p, h.data(), n * sizeof(T), cudaMemcpyHostToDevice);
  return p;
}

/// nbody_forces on `n` bodies (compute-bound), buffers of its own.
App nbodyApp(int n) {
  float4 *pos = deviceArray<float4>(n, 1.0f),
         *acc = deviceArray<float4>(n, 0.0f);
  return {"nbody_forces",
          "compute",
          {256, 32, 4096},
          [=](bool xf, cudaStream_t s) {
            if (xf)
              gpu_xf_nbody::launch_nbody_forces(pos, acc, n, 0.01f, s);
            else
              gpu_orig_nbody::launch_nbody_forces(pos, acc, n, 0.01f, s);
          },
          1};
}

std::vector<App> makeApps() {
  std::vector<App> apps;
  {
    const int n = 1 << 26; // 256 MiB per vector: streams through DRAM
    float *x = deviceArray<float>(n, 1.0f), *y = deviceArray<float>(n, 2.0f);
    apps.push_back(
        {"saxpy", "memory", {256, 32, 0}, [=](bool xf, cudaStream_t s) {
           if (xf)
             gpu_xf_vector_ops::launch_saxpy(n, 2.0f, x, y, s);
           else
             gpu_orig_vector_ops::launch_saxpy(n, 2.0f, x, y, s);
         }});
  }
  {
    const int m = 2048; // 2048^3 FMAs per launch
    float *a = deviceArray<float>(std::size_t(m) * m, 1.0f),
          *b = deviceArray<float>(std::size_t(m) * m, 0.5f),
          *c = deviceArray<float>(std::size_t(m) * m, 0.0f);
    apps.push_back({"sgemm_tiled",
                    "compute",
                    {256, 32, 2048},
                    [=](bool xf, cudaStream_t s) {
                      if (xf)
                        gpu_xf_sgemm_tiled::launch_sgemm_tiled(m, m, m, 1.0f, a,
                                                               b, 0.0f, c, s);
                      else
                        gpu_orig_sgemm_tiled::launch_sgemm_tiled(
                            m, m, m, 1.0f, a, b, 0.0f, c, s);
                    }});
  }
  {
    const int nx = 8192, ny = 8192;
    float *in = deviceArray<float>(std::size_t(nx) * ny, 1.0f),
          *out = deviceArray<float>(std::size_t(nx) * ny, 0.0f);
    apps.push_back({"jacobi5_global",
                    "memory",
                    {256, 32, 0},
                    [=](bool xf, cudaStream_t s) {
                      if (xf)
                        gpu_xf_stencil2d::launch_jacobi5_global(in, out, nx, ny,
                                                                0.8f, s);
                      else
                        gpu_orig_stencil2d::launch_jacobi5_global(in, out, nx,
                                                                  ny, 0.8f, s);
                    }});
  }
  apps.push_back(nbodyApp(1 << 16));
  return apps;
}

/// Runs each job on its own stream, all started together; returns each
/// job's turnaround in ms (start of all to the end of that job), or nothing
/// when `what` failed or may not run (mayRun()).
std::vector<double> runTogether(const std::vector<const App *> &jobs,
                                bool rewritten, const std::string &what) {
  if (!mayRun(what))
    return {};
  if (!earlierWorkDone(what))
    return {};
  std::vector<cudaStream_t> streams(jobs.size());
  std::vector<smpart_bench::Lane> lanes(jobs.size());
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    cudaStreamCreateWithFlags(&streams[i], cudaStreamNonBlocking);
    const cudaStream_t s = streams[i];
    lanes[i] = {jobs[i]->launches,
                [&, i](cudaStream_t on) { jobs[i]->launchOnce(rewritten, on); },
                [s] { return s; }, [s] { return s; }};
  }
  // One deadline for the whole co-run, never past the end of the run.
  const smpart_bench::CorunTimes t = runLanes(lanes, g_run, kDeadlineS);
  for (cudaStream_t s : streams)
    cudaStreamDestroy(s);
  if (t.error == cudaSuccess)
    return t.ms;
  stopFailed(what, t.error, t.limit,
             t.limit < kDeadlineS ? " (the end of --max-seconds)" : "");
  return {};
}

/// NaN when the run failed or may not run.
double aloneMs(const App &a, bool rewritten) {
  const std::vector<double> ms = runTogether(
      {&a}, rewritten, a.kernel + (rewritten ? " (rewritten)" : "") + " alone");
  return ms.empty() ? std::numeric_limits<double>::quiet_NaN() : ms[0];
}

/// Sets every launch's SMs and CTAs per SM before its first block.
class FixedAllocation : public smpart::LaunchObserver {
public:
  FixedAllocation(const smpart::DeviceInfo &info, unsigned sms, unsigned ctas)
      : mask(smpart::smSet(info, 0, sms)), ctas(ctas) {}
  void onLaunch(const smpart::KernelHandle &h) override {
    smpart::KernelHandle k = h;
    k.setSmMask(mask);
    if (ctas)
      k.setCtasPerSm(ctas);
    occupancy = std::max(occupancy, h.occupancy());
  }
  smpart::SmMask mask;
  unsigned ctas;
  unsigned occupancy = 0;
};

/// Isolated fixed-size runs of each rewritten job: time per launch on
/// 1/4 .. all SMs, and at 1 .. occupancy CTAs per SM on all SMs.
smpart::policy::ProfileSet measureProfiles(const std::vector<App> &apps,
                                           const smpart::DeviceInfo &info) {
  smpart::policy::ProfileSet set;
  set.source = "bench-corun (measured)";
  set.gpu = gpuSpec(info);
  const unsigned n = static_cast<unsigned>(info.sm_ids.size());
  for (const App &a : apps) {
    smpart::policy::KernelProfile k;
    k.name = a.kernel;
    k.block = a.block;
    unsigned occupancy = 1;
    for (unsigned sms : {n / 4, n / 2, 3 * n / 4, n}) {
      auto fixed =
          std::make_shared<FixedAllocation>(info, std::max(1u, sms), 0);
      smpart::setLaunchObserver(fixed);
      const double ms = aloneMs(a, true) / a.launches;
      smpart::setLaunchObserver(nullptr);
      if (std::isnan(ms))
        return set; // main() says why
      occupancy = std::max(occupancy, fixed->occupancy);
      if (k.by_sms.empty() || k.by_sms.back().sms < static_cast<int>(sms))
        k.by_sms.push_back({static_cast<int>(std::max(1u, sms)), ms, {}, {}});
    }
    for (unsigned c = 1; c <= occupancy; ++c) {
      smpart::setLaunchObserver(std::make_shared<FixedAllocation>(info, n, c));
      const double ms = aloneMs(a, true) / a.launches;
      smpart::setLaunchObserver(nullptr);
      if (std::isnan(ms))
        return set;
      k.by_ctas.push_back({static_cast<int>(c), ms});
    }
    set.kernels.push_back(std::move(k));
  }
  return set;
}

void printRow(const char *scenario, const std::string &mode, const Figures &f,
              const Figures &streams, const std::string &note) {
  std::printf("%-28s %-16s STP %5.2f  ANTT %5.2f  fair %4.2f | vs streams: "
              "STP x%4.2f  ANTT x%4.2f  fair x%4.2f  %s\n",
              scenario, mode.c_str(), f.stp, f.antt, f.fairness,
              f.stp / streams.stp, streams.antt / f.antt,
              streams.fairness > 0 ? f.fairness / streams.fairness : 0,
              note.c_str());
}

/// One latency-critical run: each short launch's latency and the
/// best-effort job's time (NaN without one); empty latencies when it failed
/// or may not run.
struct LatencyRun {
  std::vector<double> ms;
  double bestEffortMs = std::numeric_limits<double>::quiet_NaN();
};

/// Launches `lc` every `periodMs` on a stream of priority `lcPriority`
/// while `be` (if any) runs back to back on one of priority `bePriority`,
/// until `be` ends (or, without it, `count` launches). A launch's latency
/// runs from its stream reaching it (an event just before it: the request's
/// arrival on the GPU) to its end.
LatencyRun runLatency(const App &lc, const App *be, bool rewritten,
                      int lcPriority, int bePriority, double periodMs,
                      int count, const std::string &what) {
  LatencyRun out;
  if (!mayRun(what))
    return out;
  if (!earlierWorkDone(what))
    return out;
  cudaStream_t lcStream = nullptr, beStream = nullptr;
  cudaStreamCreateWithPriority(&lcStream, cudaStreamNonBlocking, lcPriority);
  cudaStreamCreateWithPriority(&beStream, cudaStreamNonBlocking, bePriority);
  std::vector<Event> starts(count), ends(count);
  Event beStart, beEnd;
  if (be) {
    cudaEventRecord(beStart, beStream);
    for (int l = 0; l < be->launches; ++l)
      be->launchOnce(rewritten, beStream);
    cudaEventRecord(beEnd, beStream);
  }
  // One deadline for the whole run, never past the end of the run.
  const double limit = g_run.limit(kDeadlineS);
  const Clock::time_point t0 = Clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(Clock::now() - t0).count();
  };
  int issued = 0;
  bool late = false;
  for (; issued < count; ++issued) {
    // The period's start (a spin: a sleep overshoots by tens of us).
    const double at = issued * periodMs / 1000.0;
    while (elapsed() < at && elapsed() <= limit) {
    }
    if ((late = elapsed() > limit) ||
        (be && issued > 0 && cudaEventQuery(beEnd) == cudaSuccess))
      break;
    cudaEventRecord(starts[issued], lcStream);
    lc.launchOnce(rewritten, lcStream);
    cudaEventRecord(ends[issued], lcStream);
  }
  cudaError_t failed = late ? cudaErrorTimeout : cudaSuccess;
  if (failed == cudaSuccess && issued > 0)
    failed = smpart_test::syncEvent(ends[issued - 1],
                                    std::max(0.0, limit - elapsed()));
  if (failed == cudaSuccess && be)
    failed = smpart_test::syncEvent(beEnd, std::max(0.0, limit - elapsed()));
  if (failed == cudaSuccess) {
    for (int i = 0; i < issued; ++i) {
      float t = 0;
      cudaEventElapsedTime(&t, starts[i], ends[i]);
      out.ms.push_back(t);
    }
    float t = 0;
    if (be && cudaEventElapsedTime(&t, beStart, beEnd) == cudaSuccess)
      out.bestEffortMs = t;
  }
  cudaStreamDestroy(lcStream);
  cudaStreamDestroy(beStream);
  if (failed == cudaSuccess)
    return out;
  stopFailed(what, failed, limit, "");
  out.ms.clear();
  return out;
}

/// Nearest-rank percentile of `v` (p in (0, 100]).
double percentile(std::vector<double> v, double p) {
  if (v.empty())
    return std::numeric_limits<double>::quiet_NaN();
  std::sort(v.begin(), v.end());
  const double rank = std::ceil(p / 100.0 * static_cast<double>(v.size()));
  return v[static_cast<std::size_t>(
               std::clamp(rank, 1.0, static_cast<double>(v.size()))) -
           1];
}

/// "ms per launch at N SMs: ..." from a profile's SM points.
std::string smCurve(const smpart::policy::KernelProfile &k) {
  std::string out = "ms per launch at N SMs:";
  char buf[48];
  for (const auto &p : k.by_sms) {
    std::snprintf(buf, sizeof buf, " %d %.3f", p.sms, p.time_ms);
    out += buf;
  }
  return out;
}

/// The latency-critical scenario (file comment): plain streams, priority
/// streams and smpart's `priority` policy, same run.
void latencyScenario(const smpart::DeviceInfo &info, const App &bestEffort,
                     const std::string &traceDir) {
  const int n = 1 << 14; // 128 blocks of 128 bodies: 0.5 ms on an H200
  const App lc = nbodyApp(n);
  App be = bestEffort; // ~160 ms alone: a hundred short launches or more
  be.launches = std::max(1, 4 * bestEffort.launches);
  const int cap = 400; // launches at most: bounds the run without a job
  int least = 0, greatest = 0;
  cudaDeviceGetStreamPriorityRange(&least, &greatest);
  // About 1.5 s of GPU work: the co-runs above come first.
  if (g_run.secondsLeft() < 5) {
    std::printf("\nlatency-critical: skipped: %.1f s left of --max-seconds\n",
                std::max(0.0, g_run.secondsLeft()));
    return;
  }

  aloneMs(be, false); // warm-up of the longer job
  // A request every millisecond, or every five launch times if longer:
  // the short kernels never queue behind each other alone.
  const double once = aloneMs(lc, false);
  if (std::isnan(once))
    return;
  const double periodMs = std::max(1.0, 5 * once);
  const LatencyRun alone =
      runLatency(lc, nullptr, false, 0, 0, periodMs, 50, "nbody alone");
  const double beAlone = aloneMs(be, false);
  if (alone.ms.empty() || std::isnan(beAlone))
    return;
  const double lcAlone = percentile(alone.ms, 50);
  std::printf("\nlatency-critical: nbody_forces (%d bodies) every %.1f ms "
              "beside sgemm_tiled x%d (best effort, %.1f ms alone); nbody "
              "alone p50 %.3f ms\n",
              n, periodMs, be.launches, beAlone, lcAlone);

  // smpart's controller: profiles of both, measured now; the short kernel
  // is the high-priority one.
  App lcOnce = lc, beOnce = be;
  beOnce.launches = 1;
  smpart::policy::ProfileSet profiles = measureProfiles({lcOnce, beOnce}, info);
  if (!g_stopped.empty())
    return;
  for (auto &k : profiles.kernels) {
    if (k.name == lc.kernel)
      k.priority = smpart::policy::Priority::High;
    std::printf("latency-critical profile %s: %s\n", k.name.c_str(),
                smCurve(k).c_str());
  }

  auto row = [&](const char *mode, const LatencyRun &r,
                 const std::string &note) {
    const double p50 = percentile(r.ms, 50), p99 = percentile(r.ms, 99);
    const double throughput = beAlone / r.bestEffortMs;
    const bool met = p99 <= 1.25 * lcAlone && throughput >= 0.6;
    std::printf("latency-critical %-18s %3zu launches  p50 %.3f ms  p99 "
                "%.3f ms  p99/alone %5.2f  best effort/alone %4.2f  "
                "targets %s %s\n",
                mode, r.ms.size(), p50, p99, p99 / lcAlone, throughput,
                met ? "met" : "missed", note.c_str());
  };
  const LatencyRun plain =
      runLatency(lc, &be, false, 0, 0, periodMs, cap, "latency plain streams");
  if (plain.ms.empty())
    return;
  row("plain streams", plain, "");
  const LatencyRun prio = runLatency(lc, &be, false, greatest, least, periodMs,
                                     cap, "latency priority streams");
  if (prio.ms.empty())
    return;
  row("priority streams", prio, "");

  const smpart::online::OnlinePolicyInfo *online =
      smpart::online::findOnlinePolicy("priority");
  const smpart::policy::Policy *base =
      online ? smpart::policy::findPolicy(online->base) : nullptr;
  if (!base)
    return;
  std::string warnings;
  smpart::ControllerOptions options;
  options.warn = [&](const std::string &w) {
    warnings += (warnings.empty() ? "" : "; ") + w;
  };
  options.online = smpart::online::makeOnlinePolicy(*online, profiles, {});
  std::unique_ptr<smpart::trace::TraceWriter> trace;
  if (!traceDir.empty()) {
    std::string error;
    trace = smpart::trace::TraceWriter::open(
        traceDir + "/latency-priority.json", &error);
    options.trace = trace.get();
  }
  auto controller = std::make_shared<smpart::Controller>(*base, profiles,
                                                         info.sm_ids, options);
  smpart::setLaunchObserver(smpart::observerFor(controller));
  // As SMPART_POLICY=priority runs it: its online step decides at epochs.
  auto epochs = std::make_unique<smpart::EpochTimer>(controller);
  const LatencyRun ours =
      runLatency(lc, &be, true, 0, 0, periodMs, cap, "latency smpart priority");
  epochs.reset();
  smpart::setLaunchObserver(nullptr);
  if (ours.ms.empty())
    return;
  row("smpart priority", ours, warnings.empty() ? "" : "(" + warnings + ")");
}

/// The end of a run that stopped early: 1, without running destructors
/// when a kernel may still hold the GPU (they could wait for it forever).
int incomplete() {
  std::printf("bench-corun: incomplete: %s\n", g_stopped.c_str());
  std::fflush(stdout);
  if (g_hung)
    std::_Exit(1);
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  // Lines reach the report as they are printed: a stage killed at its
  // deadline keeps every figure printed before.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  std::string ncu, traceDir;
  bool ncuPass = false;
  double maxSeconds = 35;
  for (int i = 1; i < argc; ++i) {
    char *end = nullptr;
    if (!std::strcmp(argv[i], "--ncu") && i + 1 < argc)
      ncu = argv[++i];
    else if (!std::strcmp(argv[i], "--trace-dir") && i + 1 < argc)
      traceDir = argv[++i];
    else if (!std::strcmp(argv[i], "--ncu-pass"))
      ncuPass = true;
    else if (!std::strcmp(argv[i], "--max-seconds") && i + 1 < argc &&
             (maxSeconds = std::strtod(argv[++i], &end)) > 0 && *end == 0)
      continue;
    else {
      std::fprintf(stderr,
                   "usage: bench-corun [--ncu ncu.csv] [--trace-dir DIR] "
                   "[--max-seconds S] | --ncu-pass [--max-seconds S]\n");
      return 2;
    }
  }
  g_run.start(maxSeconds);
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("no GPU: skipped (%s)\n",
                cudaGetErrorString(cudaGetLastError()));
    return 0;
  }
  if (ncuPass) { // one launch of each original, for ncu to measure
    // Before smpart's SM-id probe, which the originals do not need: ncu
    // would profile it too, as the first kernel with its own set-up.
    const std::vector<App> originals = makeApps();
    for (const App &a : originals)
      a.launchOnce(false, 0);
    // ncu profiles each kernel inside its launch call, so this wait is
    // short; the deadline is the rest of the run.
    const cudaError_t e =
        smpart_test::syncStream(0, std::max(0.0, g_run.secondsLeft()));
    if (e == cudaSuccess)
      return 0;
    g_stopped = std::string("ncu pass: ") + cudaGetErrorName(e);
    g_hung = e == cudaErrorTimeout;
    return incomplete();
  }
  smpart::DeviceInfo info;
  if (smpart::Status s = smpart::deviceInfo(info); !s.ok()) {
    std::printf("error: %s\n", s.message().c_str());
    return 1;
  }
  // The plans name real %smid values: wait (bounded) for the probe.
  if (!smpart_test::pollFor(std::min(5.0, g_run.secondsLeft()), [&] {
        return smpart::deviceInfo(info).ok() && info.sm_ids_probed &&
               !info.sm_ids.empty();
      })) {
    std::printf("error: the SM-id probe did not answer within 5 s\n");
    return 1;
  }
  std::vector<App> apps = makeApps();
  std::printf("co-run on %s: %zu SMs (ids %u..%u)\n",
              gpuSpec(info).name.c_str(), info.sm_ids.size(),
              info.sm_ids.front(), info.sm_ids.back());
  for (App &a : apps) { // warm-up, then size each job to ~40 ms alone
    aloneMs(a, false);
    aloneMs(a, true);
    const double once = aloneMs(a, false);
    if (std::isnan(once))
      return incomplete();
    a.launches = std::max(1, static_cast<int>(std::lround(40.0 / once)));
  }
  smpart::policy::ProfileSet profiles = measureProfiles(apps, info);
  if (!g_stopped.empty())
    return incomplete();
  if (!ncu.empty())
    mergeNcu(profiles, ncu);
  for (const auto &k : profiles.kernels)
    std::printf("profile %-16s %2zu SM points, %zu CTA points, llc_apki %s; "
                "%s\n",
                k.name.c_str(), k.by_sms.size(), k.by_ctas.size(),
                k.metrics.llc_apki ? std::to_string(*k.metrics.llc_apki).c_str()
                                   : "(no ncu)",
                smCurve(k).c_str());

  struct Scenario {
    const char *name;
    std::vector<int> apps;
  };
  const std::vector<Scenario> scenarios = {
      {"saxpy+sgemm", {0, 1}},
      {"jacobi+nbody", {2, 3}},
      {"saxpy+nbody", {0, 3}},
      {"saxpy+sgemm+jacobi+nbody", {0, 1, 2, 3}}};
  // Offline policies decide at arrivals and departures from the profiles;
  // online ones (controller README) also at every epoch, from progress
  // measured while the kernels run (EpochTimer).
  const char *policies[] = {
      "even",       "cd-search",        "hsm-fair",        "hsm-qos",
      "greedy",     "cd-search-online", "hsm-fair-online", "hsm-qos-online",
      "tlp-dynamic"};

  for (const Scenario &sc : scenarios) {
    std::vector<const App *> jobs;
    std::vector<double> alone;
    for (int i : sc.apps) {
      jobs.push_back(&apps[i]);
      alone.push_back(aloneMs(apps[i], false));
    }
    double sequential = 0;
    for (double t : alone)
      sequential += t;
    const std::vector<double> streamsMs =
        runTogether(jobs, false, std::string(sc.name) + " streams");
    if (streamsMs.empty())
      break;
    const Figures streams = figures(alone, streamsMs);
    const double streamsMakespan =
        *std::max_element(streamsMs.begin(), streamsMs.end());
    std::printf(
        "\n%s: sequential %.1f ms, plain streams makespan %.1f ms (x%.2f)\n",
        sc.name, sequential, streamsMakespan, sequential / streamsMakespan);
    printRow(sc.name, "streams", streams, streams, "");
    for (const char *name : policies) {
      const smpart::online::OnlinePolicyInfo *online =
          smpart::online::findOnlinePolicy(name);
      const smpart::policy::Policy *policy = smpart::policy::findPolicy(
          online ? std::string(online->base) : std::string(name));
      if (!policy)
        continue;
      std::string warnings;
      smpart::ControllerOptions options;
      options.warn = [&](const std::string &w) {
        warnings += (warnings.empty() ? "" : "; ") + w;
      };
      if (online)
        options.online =
            smpart::online::makeOnlinePolicy(*online, profiles, {});
      std::unique_ptr<smpart::trace::TraceWriter> trace;
      if (!traceDir.empty()) {
        std::string error;
        trace = smpart::trace::TraceWriter::open(
            traceDir + "/" + sc.name + "-" + name + ".json", &error);
        options.trace = trace.get();
      }
      auto controller = std::make_shared<smpart::Controller>(
          *policy, profiles, info.sm_ids, options);
      smpart::setLaunchObserver(smpart::observerFor(controller));
      std::unique_ptr<smpart::EpochTimer> epochs;
      if (online)
        epochs = std::make_unique<smpart::EpochTimer>(controller);
      const std::vector<double> ms =
          runTogether(jobs, true, std::string(sc.name) + " smpart " + name);
      epochs.reset();
      smpart::setLaunchObserver(nullptr);
      if (ms.empty())
        break;
      printRow(sc.name, std::string("smpart ") + name, figures(alone, ms),
               streams, warnings.empty() ? "" : "(" + warnings + ")");
    }
  }
  if (g_stopped.empty())
    latencyScenario(info, apps[1], traceDir);
  return g_stopped.empty() ? 0 : incomplete();
}
