#include "test_support.hpp"

#include <stdexcept>

namespace smpart::policy::test {

json gpu(int Sms) {
  return {{"name", "test"},
          {"num_sms", Sms},
          {"max_threads_per_sm", 2048},
          {"max_blocks_per_sm", 32},
          {"regs_per_sm", 65536},
          {"smem_per_sm", 233472},
          {"clock_ghz", 1.98},
          {"ipc_max_per_sm", 4.0},
          {"cache_line_bytes", 128},
          {"noc_bw_gbs", 10000.0},
          {"llc_bw_gbs", 7000.0},
          {"mem_bw_gbs", 4800.0},
          {"mem_bw_util", 0.5},
          {"hsm", {{"c1", 0.4}, {"c2", 0.35}, {"epoch_cycles", 500000}}}};
}

ProfileSet profiles(const json &Gpu, const json &Kernels) {
  json Doc = {
      {"schema", "smpart.profiles/1"}, {"gpu", Gpu}, {"kernels", Kernels}};
  return parseProfiles(Doc.dump(), "test.json");
}

ProfileSet example(const std::string &Name) {
  return loadProfiles(std::string(SMPART_POLICY_EXAMPLES) + "/" + Name);
}

Plan decide(const std::string &Name, const ProfileSet &Set, bool Explain) {
  const Policy *P = findPolicy(Name);
  if (!P)
    throw std::logic_error("no policy " + Name);
  PolicyOptions O;
  O.explain = Explain;
  return P->decide(Set, O);
}

const KernelDecision &find(const Plan &P, const std::string &Name) {
  for (const KernelDecision &K : P.kernels)
    if (K.name == Name)
      return K;
  throw std::logic_error("no kernel " + Name + " in plan");
}

} // namespace smpart::policy::test
