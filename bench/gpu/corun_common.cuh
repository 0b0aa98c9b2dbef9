// What the co-run benchmarks (bench-corun, bench-opaque) share: the GPU as
// the policies' models see it, the memory metrics of an Nsight Compute
// CSV, and the co-run figures of the papers (NP_i = T_alone_i /
// T_corun_i): STP = sum NP_i, ANTT = mean 1/NP_i, fairness = min NP_i /
// max NP_i.
#pragma once

#include "smpart/policy/input_error.hpp"
#include "smpart/policy/policy.hpp"
#include "smpart/profiler.hpp"
#include "smpart/runtime.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace smpart_bench {

/// The GPU as the policies' models see it.
inline smpart::policy::GpuSpec gpuSpec(const smpart::DeviceInfo &info) {
  smpart::policy::GpuSpec g;
  int dev = info.device, v = 0;
  cudaDeviceProp p{};
  cudaGetDeviceProperties(&p, dev);
  g.name = p.name;
  g.num_sms = static_cast<int>(info.sm_ids.size());
  g.max_threads_per_sm = info.max_threads_per_sm;
  g.max_blocks_per_sm = info.max_blocks_per_sm;
  g.regs_per_sm = p.regsPerMultiprocessor;
  g.smem_per_sm = static_cast<long long>(p.sharedMemPerMultiprocessor);
  if (cudaDeviceGetAttribute(&v, cudaDevAttrClockRate, dev) == cudaSuccess)
    g.clock_ghz = v / 1e6;
  int memKhz = 0, busBits = 0;
  cudaDeviceGetAttribute(&memKhz, cudaDevAttrMemoryClockRate, dev);
  cudaDeviceGetAttribute(&busBits, cudaDevAttrGlobalMemoryBusWidth, dev);
  const double memGbs = 2.0 * memKhz * 1e3 * (busBits / 8.0) / 1e9;
  g.mem_bw_gbs = memGbs;
  g.mem_bw_util = 0.5;
  // Not queryable: Hopper's L2 and crossbar bandwidths as multiples of
  // DRAM bandwidth, the model constants the CD-search and HSM papers use.
  g.llc_bw_gbs = 2.5 * memGbs;
  g.noc_bw_gbs = 4.0 * memGbs;
  g.ipc_max_per_sm = 4.0;
  g.cache_line_bytes = 128;
  g.hsm.c1 = 0.4;
  g.hsm.c2 = 0.35;
  g.hsm.epoch_cycles = 500000;
  return g;
}

/// The kernel name the co-run's profiles use for one ncu reports: the GPU
/// suite compiles each input inside a namespace of its own
/// (gpu_orig_<file>:: for the originals ncu profiles, gpu_xf_<file>:: for
/// the rewritten ones), which the runtime's kernel names do not carry.
inline std::string profileName(const std::string &ncu_name) {
  for (const char *wrapper : {"gpu_orig_", "gpu_xf_"})
    if (ncu_name.rfind(wrapper, 0) == 0)
      if (const auto colons = ncu_name.find("::"); colons != std::string::npos)
        return ncu_name.substr(colons + 2);
  return ncu_name;
}

/// LLC and DRAM metrics of the profiled kernels from an ncu CSV; a note
/// (the policies that need them fall back to even) when it has none.
inline void mergeNcu(smpart::policy::ProfileSet &set, const std::string &path) {
  std::ifstream in(path);
  if (!in) {
    std::printf("note: %s: cannot read; policies that need memory metrics "
                "fall back to even\n",
                path.c_str());
    return;
  }
  std::stringstream text;
  text << in.rdbuf();
  try {
    unsigned merged = 0;
    for (const auto &m : smpart::profiler::importNcuCsv(text.str(), path))
      for (auto &k : set.kernels)
        if (k.name == profileName(m.kernel)) {
          k.metrics.llc_apki = m.llc_apki;
          k.metrics.llc_hit_rate = m.llc_hit_rate;
          k.metrics.bw_util = m.bw_util;
          ++merged;
        }
    if (merged == 0)
      std::printf("note: %s: no kernel of the co-run in it; policies that "
                  "need memory metrics fall back to even\n",
                  path.c_str());
  } catch (const smpart::policy::InputError &e) {
    std::printf("note: %s\n", e.what());
  }
}

struct Figures {
  double stp = 0, antt = 0, fairness = 0;
};

/// The figures of a co-run from each job's time alone and together.
inline Figures figures(const std::vector<double> &alone,
                       const std::vector<double> &together) {
  Figures f;
  double lo = 1e300, hi = 0;
  for (std::size_t i = 0; i < alone.size(); ++i) {
    const double np = alone[i] / together[i];
    f.stp += np;
    f.antt += 1.0 / np;
    lo = std::min(lo, np);
    hi = std::max(hi, np);
  }
  f.antt /= alone.size();
  f.fairness = hi > 0 ? lo / hi : 0;
  return f;
}

} // namespace smpart_bench
