// Profiles from real kernels (`smpart.profiles/1`, docs/profiles.md):
//  - LiveSweep / SweepDriver: a scaling curve measured inside one run by
//    changing a running kernel's knobs at intervals and reading its progress
//    rate (no replay of non-idempotent kernels);
//  - ProfileBuilder: accumulates those samples per kernel name across
//    launches and writes the profile file;
//  - NvmlPower: board power through NVML, loaded with dlopen (no link-time
//    dependency; absent with a reason otherwise);
//  - importNcuCsv: LLC/DRAM metrics from an Nsight Compute CSV export.
// CUDA-free; the driver talks to kernels through smpart::KernelControl.
#pragma once

#include "smpart/kernel_control.hpp"
#include "smpart/policy/profile.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace smpart::profiler {

// ---------------------------------------------------------------- sweep --

/// One configuration of the sweep: `sms` SMs (ordinal count) with
/// `ctas_per_sm` CTAs each.
struct SweepStep {
  unsigned sms = 0;
  unsigned ctas_per_sm = 0;
};

/// The rate measured for one configuration.
struct RateSample {
  SweepStep step;
  double blocks = 0; ///< logical blocks finished in the measured window
  double ms = 0;     ///< length of the measured window
  double rate() const { return ms > 0 ? blocks / ms : 0; }
};

struct SweepOptions {
  /// Configurations in the order they are tried. Put larger ones first:
  /// shrinking takes effect at the next block boundary, growing needs new
  /// CTAs. Default (empty): made by defaultSchedule().
  std::vector<SweepStep> steps;
  double dwell_ms = 20;          ///< time spent in each configuration
  double settle_fraction = 0.25; ///< first part of each dwell ignored (CTAs of
                                 ///< the previous configuration still draining)
  double reserve_fraction = 0.1; ///< stop when less than this much work is left
  unsigned min_points = 3;       ///< progress reads needed to estimate a rate
};

/// SM counts num_sms, num_sms/2, num_sms/4, ... down to 1 (at most
/// \p MaxSteps) at \p Ctas CTAs per SM, then CTAs per SM occupancy .. 1 on
/// all SMs when \p Occupancy > 1.
std::vector<SweepStep> defaultSchedule(unsigned NumSms, unsigned Occupancy,
                                       unsigned MaxSteps = 6);

/// Least-squares slope of done blocks over time (blocks per ms); 0 with
/// fewer than two points or no time spread.
double estimateRate(const std::vector<std::pair<double, double>> &TimeMsDone);

/// The sweep as pure logic: feed it progress readings with their time; it
/// says which configuration should be in force and collects one RateSample
/// per completed step.
class LiveSweep {
public:
  explicit LiveSweep(SweepOptions O);
  /// The configuration to apply at \p NowMs given \p P; nullopt once the sweep
  /// is over (finished, or not enough work left to measure another step).
  std::optional<SweepStep> observe(double NowMs, const ControlProgress &P);
  bool finished() const { return Done; }
  const std::vector<RateSample> &samples() const { return Samples; }

private:
  void closeStep();
  SweepOptions Opts;
  std::size_t Index = 0;
  double StepStartMs = -1;
  std::vector<std::pair<double, double>> Points;
  std::vector<RateSample> Samples;
  bool Done = false;
};

/// Applies a LiveSweep to one running kernel: SM masks from the GPU's real
/// SM ids (the first `sms` in ascending order), CTAs per SM, grow() when a
/// step adds resources; restores every SM and the occupancy at the end.
class SweepDriver {
public:
  SweepDriver(KernelControl &K, std::vector<unsigned> SmIds, SweepOptions O);
  /// Reads progress and applies the step due at \p NowMs. False once over.
  bool tick(double NowMs);
  const LiveSweep &sweep() const { return Sweep; }
  /// The configuration in force (nullopt before the first tick and after
  /// the sweep).
  std::optional<SweepStep> current() const {
    return Restored ? std::nullopt : Current;
  }

private:
  KernelControl &K;
  std::vector<unsigned> SmIds;
  LiveSweep Sweep;
  std::optional<SweepStep> Current;
  bool Restored = false;
};

// -------------------------------------------------------------- builder --

/// Memory-side metrics of one kernel from Nsight Compute.
struct NcuMetrics {
  std::string kernel; ///< name without argument list
  unsigned launches = 0;
  std::optional<double> llc_apki, llc_hit_rate, bw_util;
};

/// Accumulates samples per kernel name across launches and writes
/// `smpart.profiles/1`. Time at a configuration = total_blocks / rate, the
/// rate being all blocks over all time measured at that configuration.
class ProfileBuilder {
public:
  explicit ProfileBuilder(policy::GpuSpec Gpu);
  void addLaunch(const std::string &Kernel, unsigned long long TotalBlocks,
                 std::optional<policy::BlockShape> Block = std::nullopt);
  void addSample(const std::string &Kernel, const RateSample &S,
                 unsigned NumSms, std::optional<double> PowerW = std::nullopt);
  void addMetrics(const NcuMetrics &M);
  nlohmann::ordered_json toJson() const;
  /// Writes atomically (temp + rename); false and \p Error on failure.
  bool write(const std::string &Path, std::string *Error) const;

private:
  struct Acc {
    double blocks = 0, ms = 0, power_sum = 0;
    unsigned power_n = 0;
  };
  struct Kernel {
    unsigned long long total_blocks = 0;
    unsigned launches = 0;
    std::optional<policy::BlockShape> block;
    std::map<unsigned, Acc> by_sms;  // on all CTAs/SM of the sweep
    std::map<unsigned, Acc> by_ctas; // on all SMs
    std::optional<NcuMetrics> metrics;
  };
  policy::GpuSpec Gpu;
  std::map<std::string, Kernel> Kernels;
  std::vector<std::string> Order;
};

// ----------------------------------------------------------------- NVML --

/// Board power via NVML, loaded with dlopen("libnvidia-ml.so.1").
class NvmlPower {
public:
  /// Loads and initialises NVML once per process.
  static NvmlPower &instance();
  bool available() const { return Available; }
  /// Why NVML is unavailable (names the library and the failing step).
  const std::string &reason() const { return Reason; }
  /// Instantaneous board power of \p Device in watts.
  bool sampleWatts(unsigned Device, double &Watts, std::string *Error) const;

private:
  NvmlPower();
  bool Available = false;
  std::string Reason;
  void *Lib = nullptr;
  void *GetHandle = nullptr;
  void *GetPower = nullptr;
};

// ----------------------------------------------------------- Nsight CSV --

/// The Nsight Compute metrics that map onto profile fields:
///   llc_apki     = lts__t_requests_srcunit_tex.sum * 1000 /
///   smsp__inst_executed.sum
///                  (L2 requests from L1/TEX per kilo warp-instruction)
///   llc_hit_rate = lts__t_sector_hit_rate.pct / 100
///   bw_util      = dram__throughput.avg.pct_of_peak_sustained_elapsed / 100
/// Collect them with:
///   ncu --csv --metrics <ncuMetricList()> ./app > ncu.csv
const char *ncuMetricList();

/// Parses `ncu --csv` output (the default "details" page: one row per metric,
/// or `--page raw`: one row per launch, units in the second row). Lines
/// before the header (==PROF== messages) are skipped; values may carry
/// thousands separators and SI-prefixed units. Launches of one kernel are
/// combined (sums for counts, means for percentages). Errors throw
/// policy::InputError naming "FILE:LINE".
std::vector<NcuMetrics> importNcuCsv(const std::string &Text,
                                     const std::string &Source);

/// Kernel name as profiles use it: demangled name without "void " and
/// without the argument list.
std::string baseKernelName(const std::string &NcuName);

} // namespace smpart::profiler
