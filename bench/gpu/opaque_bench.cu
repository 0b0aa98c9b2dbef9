// GPU benchmark of opaque work under one plan: cuBLAS SGEMM (opaque: smpart
// cannot rewrite it), a rewritten memory-bound kernel (saxpy) and a
// rewritten compute-bound kernel (nbody_forces), all three at once, under
//   - plain streams (original kernels, one stream each),
//   - green contexts alone: a static even split, one partition per job
//     (original kernels; smpart::Partition without a plan),
//   - smpart with the cd-search and hsm-fair policies: the rewritten
//     kernels under one smpart::Controller in-process, SGEMM in a
//     partition whose share the same controller plans (plannerFor()),
//     its launch boundaries not waiting for the rewritten kernels to leave
//     (the default), and again waiting up to 200 ms ("+wait": the host
//     thread that enqueues every job blocks at each SGEMM boundary that
//     moved the partition; the row's note says for how long in all).
// A job is one kernel launched L times in a row (L gives about 20 ms alone).
// Per mode, with NP_i = T_alone_i / T_corun_i (alone: the original job on
// the whole GPU, measured in this run): STP = sum NP_i, ANTT = mean 1/NP_i,
// fairness = min NP_i / max NP_i, and the ratios against plain streams of
// this same run (STP x, ANTT x = ANTT_streams / ANTT, fair x; > 1 better).
// Profiles for the policies: each rewritten job alone on 1/4 .. all SMs
// (its mask set before its first block) and SGEMM alone on partitions of
// those sizes; memory metrics from the Nsight Compute CSV of bench-corun's
// pass (`--ncu FILE`: saxpy and nbody_forces are among its kernels). A
// policy that still lacks an input falls back to `even`; the row says so.
//
// Without a GPU: "no GPU: skipped", exit 0. Bounded: every wait has a
// deadline and the run stops at --max-seconds (default 25), printing what
// it did not measure; exit 1 then. Asserts nothing.
//   bench-opaque [--ncu ncu.csv] [--trace-dir DIR] [--max-seconds S]
// Each line also gives every job's NP; --trace-dir writes the controller's
// trace of each smpart mode to DIR/opaque-<policy>.json.
#include "bounded_wait.hpp"
#include "corun_common.cuh"
#include "corun_timing.cuh"
#include "gpu_inputs.hpp"

#include "smpart/controller_runtime.hpp"
#include "smpart/partition.hpp"
#include "smpart/policy/policy.hpp"
#include "smpart/profiler.hpp"
#include "smpart/trace.hpp"

#include <cublas_v2.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace {

using smpart_bench::Figures;
using smpart_bench::figures;
using smpart_bench::gpuSpec;
using smpart_bench::kDeadlineS;
using smpart_bench::mergeNcu;
smpart_bench::RunDeadline g_run;
std::string g_stopped; // why the run stopped early

bool mayRun(const std::string &what) {
  if (!g_stopped.empty())
    return false;
  if (g_run.secondsLeft() <= 0) {
    g_stopped = "--max-seconds reached before " + what;
    return false;
  }
  return true;
}

template <class T> T *deviceArray(std::size_t n, float v) {
  T *p = nullptr;
  if (cudaMalloc(&p, n * sizeof(T)) != cudaSuccess)
    return nullptr;
  std::vector<float> h(n * sizeof(T) / sizeof(float), v);
  cudaMemcpy(p, h.data(), n * sizeof(T), cudaMemcpyHostToDevice);
  return p;
}

/// Where a job's launches go in a mode.
struct Placement {
  cudaStream_t stream = nullptr;     // plain stream
  smpart::Partition *part = nullptr; // or a partition (stream() per launch)
  cudaStream_t next() { return part ? part->stream() : stream; }
  cudaStream_t last() const { return part ? part->currentStream() : stream; }
};

struct Job {
  std::string name;
  bool opaque = false;
  int launches = 1;
  std::function<void(bool rewritten, cudaStream_t)> once;
};

/// Runs the jobs together, each on its placement, all started by one event;
/// each job's turnaround in ms, or nothing when it failed or may not run.
std::vector<double> runTogether(std::vector<Job *> jobs,
                                std::vector<Placement> where, bool rewritten,
                                const std::string &what) {
  if (!mayRun(what))
    return {};
  std::vector<smpart_bench::Lane> lanes(jobs.size());
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    Placement *p = &where[i];
    lanes[i] = {jobs[i]->launches,
                [&, i](cudaStream_t on) { jobs[i]->once(rewritten, on); },
                [p] { return p->next(); }, [p] { return p->last(); }};
  }
  const smpart_bench::CorunTimes t = runLanes(lanes, g_run, kDeadlineS);
  if (t.error != cudaSuccess) {
    std::printf("%s: FAILED: %s\n", what.c_str(),
                t.error == cudaErrorTimeout ? "not finished in time"
                                            : cudaGetErrorName(t.error));
    g_stopped = what + " failed";
    return {};
  }
  return t.ms;
}

double aloneMs(Job &j, bool rewritten, Placement p) {
  const std::vector<double> ms =
      runTogether({&j}, {p}, rewritten, j.name + " alone");
  return ms.empty() ? std::numeric_limits<double>::quiet_NaN() : ms[0];
}

/// Sets every rewritten launch's SMs before its first block.
class FixedSms : public smpart::LaunchObserver {
public:
  explicit FixedSms(smpart::SmMask m) : mask(m) {}
  void onLaunch(const smpart::KernelHandle &h) override {
    smpart::KernelHandle k = h;
    if (!k.opaque())
      k.setSmMask(mask);
  }
  smpart::SmMask mask;
};

/// One mode's line: the figures, their ratios against plain streams, each
/// job's normalised progress (alone / together: which job a mode slows
/// down) and the note.
void printRow(const std::string &mode, const std::vector<Job *> &jobs,
              const std::vector<double> &alone,
              const std::vector<double> &together, const Figures &base,
              const std::string &note) {
  const Figures f = figures(alone, together);
  std::string np;
  for (std::size_t i = 0; i < jobs.size() && i < together.size(); ++i) {
    char one[64];
    std::snprintf(one, sizeof one, "%s%s %.2f", np.empty() ? "NP " : ", ",
                  jobs[i]->name.c_str(), alone[i] / together[i]);
    np += one;
  }
  std::printf("opaque mix  %-22s STP %5.2f  ANTT %5.2f  fair %4.2f | vs "
              "streams: STP x%4.2f  ANTT x%4.2f  fair x%4.2f  %s%s%s\n",
              mode.c_str(), f.stp, f.antt, f.fairness, f.stp / base.stp,
              base.antt / f.antt,
              base.fairness > 0 ? f.fairness / base.fairness : 0, np.c_str(),
              note.empty() ? "" : "; ", note.c_str());
}

/// The end of a run that stopped early: 1, without running destructors,
/// which could wait for ever for a kernel that missed its deadline.
int stopped() {
  std::printf("stopped: %s\n", g_stopped.c_str());
  std::fflush(stdout);
  std::_Exit(1);
}

} // namespace

int main(int argc, char **argv) {
  // Lines reach the report as they are printed: a stage killed at its
  // deadline keeps every figure printed before.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  double max_s = 25;
  std::string ncu, trace_dir;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--max-seconds") && i + 1 < argc)
      max_s = std::atof(argv[++i]);
    else if (!std::strcmp(argv[i], "--ncu") && i + 1 < argc)
      ncu = argv[++i];
    else if (!std::strcmp(argv[i], "--trace-dir") && i + 1 < argc)
      trace_dir = argv[++i];
    else {
      std::fprintf(stderr, "usage: bench-opaque [--ncu ncu.csv] [--trace-dir "
                           "DIR] [--max-seconds S]\n");
      return 2;
    }
  }
  g_run.start(max_s);
  if (const smpart::Status st = smpart::init(); !st.ok()) {
    std::printf("no GPU: skipped (%s)\n", st.message().c_str());
    return 0;
  }
  smpart::DeviceInfo info;
  if (!smpart::deviceInfo(info).ok() || !info.sm_ids_probed) {
    std::printf("FAILED: the SM-id probe did not answer\n");
    return 1;
  }
  const unsigned n_sms = static_cast<unsigned>(info.sm_ids.size());

  // The jobs.
  cublasHandle_t blas;
  if (cublasCreate(&blas) != CUBLAS_STATUS_SUCCESS) {
    std::printf("FAILED: cublasCreate\n");
    return 1;
  }
  const int m = 2048;
  float *a = deviceArray<float>(std::size_t(m) * m, 1.0f),
        *b = deviceArray<float>(std::size_t(m) * m, 0.5f),
        *c = deviceArray<float>(std::size_t(m) * m, 0.0f);
  const int n = 1 << 24;
  float *x = deviceArray<float>(n, 1.0f), *y = deviceArray<float>(n, 2.0f);
  const int bodies = 1 << 15;
  float4 *pos = deviceArray<float4>(bodies, 1.0f),
         *acc = deviceArray<float4>(bodies, 0.0f);
  if (!a || !b || !c || !x || !y || !pos || !acc) {
    std::printf("FAILED: device memory\n");
    return 1;
  }
  Job sgemm{"cublas_sgemm", true, 1, [=](bool, cudaStream_t s) {
              const float one = 1.0f, zero = 0.0f;
              cublasSetStream(blas, s);
              cublasSgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, m, m, m, &one, a, m,
                          b, m, &zero, c, m);
            }};
  Job saxpy{"saxpy", false, 1, [=](bool xf, cudaStream_t s) {
              if (xf)
                gpu_xf_vector_ops::launch_saxpy(n, 0.5f, x, y, s);
              else
                gpu_orig_vector_ops::launch_saxpy(n, 0.5f, x, y, s);
            }};
  Job nbody{"nbody_forces", false, 1, [=](bool xf, cudaStream_t s) {
              if (xf)
                gpu_xf_nbody::launch_nbody_forces(pos, acc, bodies, 0.01f, s);
              else
                gpu_orig_nbody::launch_nbody_forces(pos, acc, bodies, 0.01f, s);
            }};
  std::vector<Job *> jobs{&sgemm, &saxpy, &nbody};
  cudaStream_t streams[3];
  for (auto &s : streams)
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);

  // L per job: about 20 ms alone (one launch measured first).
  std::vector<double> alone;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    (void)aloneMs(*jobs[i], false, {streams[i]}); // warm-up, loads
    const double one = aloneMs(*jobs[i], false, {streams[i]});
    if (std::isnan(one))
      break;
    jobs[i]->launches = std::clamp(
        static_cast<int>(std::ceil(20.0 / std::max(one, 1e-3))), 1, 400);
    alone.push_back(aloneMs(*jobs[i], false, {streams[i]}));
    std::printf("alone  %-14s %3d launches  %7.2f ms\n", jobs[i]->name.c_str(),
                jobs[i]->launches, alone.back());
  }
  if (alone.size() != jobs.size() ||
      std::any_of(alone.begin(), alone.end(),
                  [](double v) { return std::isnan(v); })) {
    return stopped();
  }

  // Plain streams.
  const std::vector<double> plain = runTogether(
      jobs, {{streams[0]}, {streams[1]}, {streams[2]}}, false, "streams");
  if (plain.empty()) {
    return stopped();
  }
  const Figures base = figures(alone, plain);
  printRow("streams", jobs, alone, plain, base, "");

  // Green contexts alone: a static even split, each a third of the SMs
  // rounded down to the device's step (the smallest partition's size).
  {
    unsigned step = 1;
    {
      smpart::PartitionOptions o;
      o.sms = 1;
      o.follow_plan = false;
      std::shared_ptr<smpart::Partition> p;
      smpart::Partition::open("step", o, p);
      if (p && p->confined())
        step = p->state().sms;
      smpart::Partition::close("step");
    }
    std::vector<std::shared_ptr<smpart::Partition>> parts(3);
    bool confined = true;
    std::string why;
    for (unsigned i = 0; i < 3; ++i) {
      smpart::PartitionOptions o;
      o.sms = std::max(step, n_sms / 3 / step * step);
      o.follow_plan = false;
      smpart::Partition::open("even_" + std::to_string(i), o, parts[i]);
      confined = confined && parts[i] && parts[i]->confined();
      if (parts[i] && !parts[i]->confined())
        why = parts[i]->reason();
    }
    if (!confined) {
      std::printf("opaque mix  green-even             skipped: no green "
                  "contexts (%s)\n",
                  why.c_str());
    } else {
      std::vector<Placement> where;
      std::string sizes;
      for (auto &p : parts) {
        where.push_back({nullptr, p.get()});
        sizes += (sizes.empty() ? "" : "/") + std::to_string(p->state().sms);
      }
      const std::vector<double> t =
          runTogether(jobs, where, false, "green-even");
      if (!t.empty())
        printRow("green-even", jobs, alone, t, base, "SMs " + sizes);
    }
    for (unsigned i = 0; i < 3; ++i)
      smpart::Partition::close("even_" + std::to_string(i));
  }

  // Profiles for the policies: each job alone on 1/4 .. all SMs.
  smpart::policy::ProfileSet profiles;
  profiles.source = "bench-opaque (measured)";
  profiles.gpu = gpuSpec(info);
  for (Job *j : jobs) {
    smpart::policy::KernelProfile k;
    k.name = j->name;
    k.block = {256, 32, 0};
    const int saved = j->launches;
    j->launches = std::max(1, saved / 4);
    for (unsigned sms : {n_sms / 4, n_sms / 2, 3 * n_sms / 4, n_sms}) {
      double ms = std::numeric_limits<double>::quiet_NaN();
      if (j->opaque) {
        smpart::PartitionOptions o;
        o.sms = sms;
        o.follow_plan = false;
        std::shared_ptr<smpart::Partition> p;
        smpart::Partition::open("profile", o, p);
        if (p && p->confined())
          ms = aloneMs(*j, false, {nullptr, p.get()});
        smpart::Partition::close("profile");
      } else {
        smpart::setLaunchObserver(
            std::make_shared<FixedSms>(smpart::smSet(info, 0, sms)));
        ms = aloneMs(*j, true, {streams[0]});
        smpart::setLaunchObserver(nullptr);
      }
      if (!std::isnan(ms))
        k.by_sms.push_back({static_cast<int>(sms), ms / j->launches, {}, {}});
    }
    j->launches = saved;
    profiles.kernels.push_back(std::move(k));
  }

  if (!ncu.empty())
    mergeNcu(profiles, ncu);

  // smpart: one controller plans the rewritten kernels and SGEMM's
  // partition together. The traces outlive every controller and partition.
  std::vector<std::unique_ptr<smpart::trace::TraceWriter>> traces;
  for (const auto &[name, wait_ms] :
       {std::pair<const char *, unsigned>{"cd-search", 0},
        {"cd-search", 200},
        {"hsm-fair", 0},
        {"hsm-fair", 200}}) {
    const smpart::policy::Policy *policy = smpart::policy::findPolicy(name);
    if (!policy || !mayRun(name))
      continue;
    const std::string mode =
        std::string("smpart ") + name + (wait_ms ? "+wait" : "");
    std::vector<std::string> notes;
    smpart::ControllerOptions opts;
    opts.warn = [&](const std::string &w) { notes.push_back(w); };
    if (!trace_dir.empty()) {
      std::string error;
      traces.push_back(smpart::trace::TraceWriter::open(
          trace_dir + "/opaque-" + name + (wait_ms ? "-wait" : "") + ".json",
          &error));
      if (!traces.back())
        std::printf("note: no trace: %s\n", error.c_str());
      opts.trace = traces.back().get();
    }
    auto ctl = std::make_shared<smpart::Controller>(*policy, profiles,
                                                    info.sm_ids, opts);
    std::shared_ptr<smpart::OpaquePlanner> planner = smpart::plannerFor(ctl);
    smpart::PartitionOptions o;
    o.planner = planner;
    o.sms = n_sms / 3; // the share when the controller plans no opaque work
    o.min_sms = 1;
    o.hold_timeout_ms = wait_ms;
    const std::string part_name = std::string("cublas_sgemm");
    std::shared_ptr<smpart::Partition> p;
    smpart::Partition::open(part_name, o, p);
    if (!p) {
      std::printf("opaque mix  %-22s FAILED: no partition\n", mode.c_str());
      continue;
    }
    smpart::setLaunchObserver(smpart::observerFor(ctl));
    const std::vector<double> t = runTogether(
        jobs, {{nullptr, p.get()}, {streams[1]}, {streams[2]}}, true, mode);
    smpart::setLaunchObserver(nullptr);
    const smpart::PartitionState st = p->state();
    char waited[96];
    std::snprintf(waited, sizeof waited,
                  ", boundaries blocked %.1f ms (%llu timeouts)",
                  st.hold_wait_ms, st.hold_timeouts);
    std::string note =
        p->confined() ? "SGEMM on " + std::to_string(st.sms) + " SMs, " +
                            std::to_string(st.switches) + " resizes" + waited
                      : "SGEMM unconfined: " + p->reason();
    if (!planner)
      note += "; controller plans no opaque work: static share";
    for (const std::string &w : notes)
      if (w.find("fall") != std::string::npos) {
        note += "; " + w;
        break;
      }
    smpart::Partition::close(part_name);
    if (!t.empty())
      printRow(mode, jobs, alone, t, base, note);
  }
  cublasDestroy(blas);
  if (!g_stopped.empty()) {
    return stopped();
  }
  return 0;
}
