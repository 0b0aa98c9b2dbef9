// The controller's own cost per epoch (BM_Epoch: progress reads and the
// samples of N running kernels, with and without an online hook;
// BM_EpochOnline: the same with each online policy deciding) and per
// event: one arrival re-plan (progress reads
// of every kernel, the policy's decision, knob writes) with N kernels
// already running, on fake kernels (knob writes and progress reads cost a
// virtual call here; on a GPU add the runtime's cost of each).
#include "../../runtime/controller/tests/fake_kernel.hpp"

#include "online_policies.hpp"

#include "smpart/controller.hpp"
#include "smpart/policy/profile_loader.hpp"

#include <benchmark/benchmark.h>

#include <memory>

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

/// A controller on 132 SMs with N - 1 kernels running and the name of the
/// N-th, whose arrival and departure the benchmarks time.
struct CoRun {
  std::vector<unsigned> Ids;
  std::unique_ptr<Controller> C;
  std::vector<std::shared_ptr<testing::FakeKernel>> Running;
  std::string Next;
  unsigned long long NextId = 1000;

  CoRun(const char *PolicyName, int N) {
    for (unsigned I = 0; I < 132; ++I)
      Ids.push_back(I);
    ControllerOptions O;
    O.warn = [](const std::string &) {};
    C = std::make_unique<Controller>(*policy::findPolicy(PolicyName),
                                     profiles(N), Ids, O);
    for (int I = 0; I + 1 < N; ++I) {
      Running.push_back(std::make_shared<testing::FakeKernel>(
          I + 1, name(I), 1000000, 8, Ids, nullptr));
      C->onArrival(Running.back());
    }
    Next = name(N - 1);
  }
  static std::string name(int I) {
    return (I % 2 ? "stream_triad" : "sgemm") + std::to_string(I);
  }
  /// Arrives and returns the newcomer's id.
  unsigned long long arrive() {
    C->onArrival(std::make_shared<testing::FakeKernel>(NextId, Next, 1000000, 8,
                                                       Ids, nullptr));
    return NextId++;
  }
};

void countEvents(benchmark::State &S, double PerIteration) {
  S.counters["events"] = benchmark::Counter(
      PerIteration * static_cast<double>(S.iterations()),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_ArrivalReplan(benchmark::State &S, const char *PolicyName) {
  CoRun R(PolicyName, static_cast<int>(S.range(0)));
  for (auto _ : S)
    R.C->onDeparture(R.arrive()); // re-plans with N, then N - 1 kernels
  countEvents(S, 2.0);
}

/// The same arrival when the running kernels have not acknowledged their
/// shrink yet: the newcomer's grant waits, and one acknowledgement event
/// (settle: knobsApplied() of every kernel, then the grant) completes it.
/// Reported per event (arrival, acknowledgement, departure).
void BM_ArrivalWithDeferredGrant(benchmark::State &S, const char *PolicyName) {
  CoRun R(PolicyName, static_cast<int>(S.range(0)));
  for (auto _ : S) {
    for (auto &K : R.Running)
      K->Applied = false;
    const unsigned long long Id = R.arrive(); // the newcomer waits
    for (auto &K : R.Running)
      K->Applied = true;
    R.C->onKnobsApplied(1); // the grant goes out
    R.C->onDeparture(Id);
  }
  countEvents(S, 3.0);
  S.counters["deferred"] = static_cast<double>(R.C->deferredGrants());
}

/// An online policy that looks at every sample and keeps the knobs: the
/// hook's own cost, not a policy's.
class Watcher : public OnlinePolicy {
public:
  std::string_view name() const override { return "watch"; }
  std::optional<policy::Plan> onEpoch(const EpochReport &R,
                                      const policy::Plan &) override {
    for (const EpochSample &S : R.kernels)
      Sum += S.np;
    return std::nullopt;
  }
  double Sum = 0;
};

/// Times one epoch with N = S.range(0) kernels running under \p Base and
/// \p Online (may be null): a progress read per kernel, the samples (rate,
/// isolated rate from the profile curves, NP, sampling period) and the
/// online policy. The kernels advance between epochs so every sample has
/// blocks; no trace.
void timeEpochs(benchmark::State &S, const std::string &Base,
                std::shared_ptr<OnlinePolicy> Online) {
  const int N = static_cast<int>(S.range(0));
  std::vector<unsigned> Ids;
  for (unsigned I = 0; I < 132; ++I)
    Ids.push_back(I);
  ControllerOptions O;
  O.warn = [](const std::string &) {};
  O.online = std::move(Online);
  Controller C(*policy::findPolicy(Base), profiles(N), Ids, O);
  std::vector<std::shared_ptr<testing::FakeKernel>> Ks;
  for (int I = 0; I < N; ++I) {
    Ks.push_back(std::make_shared<testing::FakeKernel>(
        I + 1, CoRun::name(I), 1ull << 60, 8, Ids, nullptr));
    C.onArrival(Ks.back());
  }
  double Now = 0;
  C.epoch(Now);
  for (auto _ : S) {
    for (auto &K : Ks)
      K->advance();
    Now += 1000;
    C.epoch(Now);
  }
  S.counters["epochs"] = benchmark::Counter(static_cast<double>(S.iterations()),
                                            benchmark::Counter::kIsRate |
                                                benchmark::Counter::kInvert);
}

/// Measurement alone, and with a hook that only reads the samples.
void BM_Epoch(benchmark::State &S, bool Online) {
  auto W = std::make_shared<Watcher>();
  timeEpochs(S, "even", Online ? W : nullptr);
  benchmark::DoNotOptimize(W->Sum);
}

/// Under an online policy: its decision and, when it steps, the re-plan
/// and knob writes. The kernels run at a steady rate, so each policy
/// converges and then holds: the figure is the steady state, its first
/// steps included.
void BM_EpochOnline(benchmark::State &S, const online::OnlinePolicyInfo *Info) {
  const int N = static_cast<int>(S.range(0));
  timeEpochs(S, std::string(Info->base),
             online::makeOnlinePolicy(*Info, profiles(N), {}));
}

/// One BM_EpochOnline per online policy, named after it.
[[maybe_unused]] const bool Registered = [] {
  for (const online::OnlinePolicyInfo &I : online::onlinePolicies())
    benchmark::RegisterBenchmark(
        ("BM_EpochOnline/" + std::string(I.name)).c_str(), BM_EpochOnline, &I)
        ->Arg(2)
        ->Arg(4)
        ->Arg(8);
  return true;
}();

} // namespace

BENCHMARK_CAPTURE(BM_Epoch, measure, false)->Arg(2)->Arg(4)->Arg(8);
BENCHMARK_CAPTURE(BM_Epoch, online_hook, true)->Arg(2)->Arg(4)->Arg(8);
BENCHMARK_CAPTURE(BM_ArrivalWithDeferredGrant, even, "even")
    ->Arg(2)
    ->Arg(4)
    ->Arg(8);
BENCHMARK_CAPTURE(BM_ArrivalWithDeferredGrant, cd_search, "cd-search")
    ->Arg(2)
    ->Arg(4)
    ->Arg(8);
BENCHMARK_CAPTURE(BM_ArrivalReplan, even, "even")->Arg(2)->Arg(4)->Arg(8);
BENCHMARK_CAPTURE(BM_ArrivalReplan, greedy, "greedy")->Arg(2)->Arg(4)->Arg(8);
BENCHMARK_CAPTURE(BM_ArrivalReplan, cd_search, "cd-search")
    ->Arg(2)
    ->Arg(4)
    ->Arg(8);
BENCHMARK_CAPTURE(BM_ArrivalReplan, hsm_fair, "hsm-fair")
    ->Arg(2)
    ->Arg(4)
    ->Arg(8);
BENCHMARK_CAPTURE(BM_ArrivalReplan, tlp, "tlp")->Arg(2)->Arg(4)->Arg(8);
BENCHMARK_CAPTURE(BM_ArrivalReplan, power_aware, "power-aware")
    ->Arg(2)
    ->Arg(4)
    ->Arg(8);

BENCHMARK_MAIN();
