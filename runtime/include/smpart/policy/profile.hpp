// The profile model (`smpart.profiles/1`, see DESIGN.md "Policies"): what the
// policies know about the GPU and about each kernel. Everything except
// gpu.num_sms and kernels[].name is optional here; a policy that needs a
// field asks for it through requireField() and gets an InputError naming the
// JSON path when it is absent.
#pragma once

#include "smpart/policy/input_error.hpp"

#include <optional>
#include <string>
#include <vector>

namespace smpart::policy {

struct HsmConstants {
  std::optional<double> c1;
  std::optional<double> c2;
  std::optional<double> epoch_cycles;
};

struct GpuSpec {
  std::string name;
  int num_sms = 0;
  // Per-SM limits used for occupancy (threads, blocks, registers, bytes).
  std::optional<long long> max_threads_per_sm;
  std::optional<long long> max_blocks_per_sm;
  std::optional<long long> regs_per_sm;
  std::optional<long long> smem_per_sm;
  // Off-SM bandwidth model inputs (CD-search Eq. 1-2) and HSM Eq. 2-3.
  std::optional<double> clock_ghz;
  std::optional<double> ipc_max_per_sm;
  std::optional<double> cache_line_bytes;
  std::optional<double> noc_bw_gbs;
  std::optional<double> llc_bw_gbs;
  std::optional<double> mem_bw_gbs;
  std::optional<double> mem_bw_util;
  HsmConstants hsm;
};

struct BlockShape {
  long long threads = 0;
  long long regs_per_thread = 0;
  long long smem_bytes = 0;
};

/// One isolated run on `sms` SMs.
struct SmPoint {
  int sms = 0;
  double time_ms = 0;
  std::optional<double> ipc;
  std::optional<double> power_w;
};

/// One isolated run with `ctas` CTAs per SM (all SMs).
struct CtaPoint {
  int ctas = 0;
  double time_ms = 0;
};

enum class TlpType { Up, Optimal, Down };
enum class Priority { Normal, High, Low };

struct KernelMetrics {
  std::optional<double> llc_apki;
  std::optional<double> llc_hit_rate;
  std::optional<double> bw_util;
  std::optional<double> rbh;
  std::optional<TlpType> type;
  std::optional<int> opt_ctas_per_sm;
};

/// Counters from one epoch of shared-mode execution (HSM's inputs).
struct SharedSample {
  std::optional<int> sms;
  std::optional<double> instructions;
  std::optional<double> cycles;
  std::optional<double> mem_accesses;
  std::optional<double> bw_util;
  std::optional<double> rbh;
};

struct KernelProfile {
  std::string name;
  std::optional<BlockShape> block;
  std::optional<long long> total_blocks;
  long long executed_blocks = 0;
  std::vector<SmPoint> by_sms;   // sorted, strictly increasing sms
  std::vector<CtaPoint> by_ctas; // sorted, strictly increasing ctas
  KernelMetrics metrics;
  std::optional<SharedSample> shared; // present when "shared" was given
  Priority priority = Priority::Normal;
  std::optional<double> np_target;
};

struct ProfileSet {
  std::string source; // file name used in error messages
  GpuSpec gpu;
  std::vector<KernelProfile> kernels;
  /// "FILE: PATH: ..." for fields the loader ignored (unknown names).
  std::vector<std::string> warnings;
};

/// JSON path of kernel \p Index, e.g. "kernels[1]".
std::string kernelPath(std::size_t Index);

/// Returns *Value or throws InputError(source, Path, "required by ...").
template <typename T>
const T &requireField(const std::optional<T> &Value, const ProfileSet &Set,
                      const std::string &Path, const std::string &Who) {
  if (!Value)
    throw InputError(Set.source, Path, "missing; required by " + Who);
  return *Value;
}

const char *tlpTypeName(TlpType Type);

} // namespace smpart::policy
