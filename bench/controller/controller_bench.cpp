// The controller's own cost per event: one arrival re-plan (progress reads
// of every kernel, the policy's decision, knob writes) with N kernels
// already running, on fake kernels (knob writes and progress reads cost a
// virtual call here; on a GPU add the runtime's cost of each).
#include "../../runtime/controller/tests/fake_kernel.hpp"

#include "smpart/controller.hpp"
#include "smpart/policy/profile_loader.hpp"

#include <benchmark/benchmark.h>

using namespace smpart;

namespace {

policy::ProfileSet profiles(int N) {
  policy::ProfileSet Base = policy::loadProfiles(
      std::string(SMPART_POLICY_EXAMPLES) + "/compute_memory_pair.json");
  policy::ProfileSet Set = Base;
  Set.kernels.clear();
  for (int I = 0; I < N; ++I) {
    policy::KernelProfile K = Base.kernels[I % 2];
    K.name += std::to_string(I);
    Set.kernels.push_back(K);
  }
  return Set;
}

void BM_ArrivalReplan(benchmark::State &S, const char *PolicyName) {
  const int N = static_cast<int>(S.range(0));
  std::vector<unsigned> Ids;
  for (unsigned I = 0; I < 132; ++I)
    Ids.push_back(I);
  const policy::Policy *P = policy::findPolicy(PolicyName);
  ControllerOptions O;
  O.warn = [](const std::string &) {};
  Controller C(*P, profiles(N), Ids, O);
  std::vector<std::shared_ptr<testing::FakeKernel>> Ks;
  for (int I = 0; I + 1 < N; ++I) {
    Ks.push_back(std::make_shared<testing::FakeKernel>(
        I + 1, "sgemm" + std::string() + std::to_string(I), 1000000, 8, Ids,
        nullptr));
    Ks.back()->Name = (I % 2 ? "stream_triad" : "sgemm") + std::to_string(I);
    C.onArrival(Ks.back());
  }
  unsigned long long NextId = 1000;
  const std::string Last =
      ((N - 1) % 2 ? "stream_triad" : "sgemm") + std::to_string(N - 1);
  for (auto _ : S) {
    auto K = std::make_shared<testing::FakeKernel>(NextId, Last, 1000000, 8,
                                                   Ids, nullptr);
    C.onArrival(K);  // re-plan with N kernels
    C.onDeparture(NextId++); // re-plan with N - 1 kernels
  }
  S.counters["events"] = benchmark::Counter(
      2.0 * static_cast<double>(S.iterations()), benchmark::Counter::kIsRate |
                                                     benchmark::Counter::kInvert);
}

/// The same arrival when the running kernels have not acknowledged their
/// shrink yet: the newcomer's grant waits, and one acknowledgement event
/// (settle: knobsApplied() of every kernel, then the grant) completes it.
/// Reported per event (arrival, acknowledgement, departure).
void BM_ArrivalWithDeferredGrant(benchmark::State &S, const char *PolicyName) {
  const int N = static_cast<int>(S.range(0));
  std::vector<unsigned> Ids;
  for (unsigned I = 0; I < 132; ++I)
    Ids.push_back(I);
  const policy::Policy *P = policy::findPolicy(PolicyName);
  ControllerOptions O;
  O.warn = [](const std::string &) {};
  Controller C(*P, profiles(N), Ids, O);
  std::vector<std::shared_ptr<testing::FakeKernel>> Ks;
  for (int I = 0; I + 1 < N; ++I) {
    Ks.push_back(std::make_shared<testing::FakeKernel>(
        I + 1, (I % 2 ? "stream_triad" : "sgemm") + std::to_string(I), 1000000,
        8, Ids, nullptr));
    C.onArrival(Ks.back());
  }
  unsigned long long NextId = 1000;
  const std::string Last =
      ((N - 1) % 2 ? "stream_triad" : "sgemm") + std::to_string(N - 1);
  for (auto _ : S) {
    for (auto &K : Ks)
      K->Applied = false;
    auto K = std::make_shared<testing::FakeKernel>(NextId, Last, 1000000, 8,
                                                   Ids, nullptr);
    C.onArrival(K); // the running kernels shrink; the newcomer waits
    for (auto &R : Ks)
      R->Applied = true;
    C.onKnobsApplied(1); // the grant goes out
    C.onDeparture(NextId++);
  }
  S.counters["events"] = benchmark::Counter(
      3.0 * static_cast<double>(S.iterations()), benchmark::Counter::kIsRate |
                                                     benchmark::Counter::kInvert);
  S.counters["deferred"] = static_cast<double>(C.deferredGrants());
}

} // namespace

BENCHMARK_CAPTURE(BM_ArrivalWithDeferredGrant, even, "even")->Arg(2)->Arg(4)->Arg(8);
BENCHMARK_CAPTURE(BM_ArrivalWithDeferredGrant, cd_search, "cd-search")->Arg(2)->Arg(4)->Arg(8);
BENCHMARK_CAPTURE(BM_ArrivalReplan, even, "even")->Arg(2)->Arg(4)->Arg(8);
BENCHMARK_CAPTURE(BM_ArrivalReplan, greedy, "greedy")->Arg(2)->Arg(4)->Arg(8);
BENCHMARK_CAPTURE(BM_ArrivalReplan, cd_search, "cd-search")->Arg(2)->Arg(4)->Arg(8);
BENCHMARK_CAPTURE(BM_ArrivalReplan, hsm_fair, "hsm-fair")->Arg(2)->Arg(4)->Arg(8);
BENCHMARK_CAPTURE(BM_ArrivalReplan, tlp, "tlp")->Arg(2)->Arg(4)->Arg(8);
BENCHMARK_CAPTURE(BM_ArrivalReplan, power_aware, "power-aware")->Arg(2)->Arg(4)->Arg(8);

BENCHMARK_MAIN();
