// Every online policy in the controller's loop, with measurements no
// contention model would produce: rates of zero or far above the profile,
// isolated rates from any source, kernels without a profile, arrivals and
// departures at random, epochs of any length. A policy runs inside the
// user's process with the controller's lock held: whatever it is shown, it
// returns (no crash, no endless loop) and a plan the controller can apply,
// or none.
#include "online_policies.hpp"
#include "online_test_support.hpp"

#include "smpart/controller_epoch.hpp"
#include "smpart/policy/plan.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

using namespace smpart;

namespace {

constexpr int kSms = 132;

/// A running kernel and the allocation the last plan gave it.
struct Live {
  unsigned long long id = 0;
  std::string name;
  unsigned long long done = 0, total = 0, epochs = 0;
  double rate = 0; ///< blocks per us it runs at, give or take half
  unsigned sms = 0, ctas = 0, bypass = 0;
  bool preempted = false;
  bool moved = true; ///< its knobs changed since the last epoch
};

/// What the controller does with a plan: each kernel gets its decision.
void applyPlan(const policy::Plan &P, std::vector<Live> &Kernels) {
  for (std::size_t I = 0; I < Kernels.size() && I < P.kernels.size(); ++I) {
    const policy::KernelDecision &D = P.kernels[I];
    Live &K = Kernels[I];
    const bool Preempted = D.sms <= 0 || (D.round && *D.round > 0);
    const auto Sms = static_cast<unsigned>(std::max(0, D.sms));
    const auto Ctas = static_cast<unsigned>(std::max(0, D.ctas_per_sm));
    const auto Bypass =
        static_cast<unsigned>(std::max(0, D.bypass_ctas_per_sm));
    K.moved = K.moved || Sms != K.sms || Ctas != K.ctas || Bypass != K.bypass ||
              Preempted != K.preempted;
    K.sms = Sms;
    K.ctas = Ctas;
    K.bypass = Bypass;
    K.preempted = Preempted;
  }
}

/// The offline policy's re-plan on an event: an even partition, or every
/// SM for each kernel with an even share of the CTA slots (\p Shared, as
/// TLP plans).
policy::Plan evenPlan(const std::vector<Live> &Kernels, bool Shared) {
  policy::Plan P;
  P.num_sms = kSms;
  const int N = static_cast<int>(Kernels.size());
  for (int I = 0; I < N; ++I) {
    policy::KernelDecision D;
    D.name = Kernels[static_cast<std::size_t>(I)].name;
    D.sms = Shared ? kSms : kSms / N;
    D.sm_first = Shared ? 0 : I * (kSms / N);
    D.ctas_per_sm = std::max(1, 8 / N);
    P.kernels.push_back(D);
  }
  return P;
}

/// One epoch's report: every kernel's progress moved on at random.
EpochReport randomReport(std::mt19937 &G, std::vector<Live> &Kernels,
                         unsigned long long Index, double &Clock) {
  auto Uniform = [&](double Lo, double Hi) {
    return std::uniform_real_distribution<double>(Lo, Hi)(G);
  };
  auto Chance = [&](double P) { return Uniform(0, 1) < P; };
  EpochReport R;
  R.index = Index;
  R.start_us = Clock;
  // Mostly the default epoch; sometimes one cut short by an event, or long.
  const double Us = Chance(0.8) ? 1000 : Uniform(1, 20000);
  Clock += Us;
  R.end_us = Clock;
  for (Live &K : Kernels) {
    EpochSample S;
    S.id = K.id;
    S.name = K.name;
    S.preempted = K.preempted;
    S.sms = K.preempted ? 0u : K.sms;
    S.ctas_per_sm = K.ctas;
    S.bypass_ctas_per_sm = K.bypass;
    // Never steady in its first epoch or right after its knobs moved.
    S.steady = K.epochs > 0 && !K.moved && Chance(0.9);
    K.moved = false;
    S.alone = Kernels.size() == 1;
    const double Ran =
        K.preempted || Chance(0.05) ? 0 : K.rate * Us * Uniform(0.5, 1.5);
    S.blocks = std::min(K.total - K.done, static_cast<unsigned long long>(Ran));
    K.done += S.blocks;
    S.done = K.done;
    S.total = K.total;
    S.rate = static_cast<double>(S.blocks) / Us;
    S.isolated_source = static_cast<IsolatedSource>(
        std::uniform_int_distribution<int>(0, 2)(G));
    S.isolated_rate =
        S.isolated_source == IsolatedSource::None ? 0 : Uniform(0.001, 100);
    S.np = S.isolated_rate > 0 ? S.rate / S.isolated_rate : 0;
    S.profile_rate = Chance(0.7) ? Uniform(0.001, 100) : 0;
    S.awaiting_sms = S.preempted && Chance(0.5);
    S.sampling_period_us =
        S.rate > 0 ? static_cast<double>(S.sms) * S.ctas_per_sm / S.rate : 0;
    S.epochs = ++K.epochs;
    R.kernels.push_back(S);
  }
  return R;
}

/// The plan the controller applies: one decision per kernel, in order,
/// within the SMs. \p Where: the policy and the epoch, for the message.
void expectApplicable(const policy::Plan &P, const std::vector<Live> &Kernels,
                      const std::string &Where) {
  ASSERT_EQ(P.kernels.size(), Kernels.size()) << Where;
  for (std::size_t I = 0; I < P.kernels.size(); ++I) {
    const policy::KernelDecision &D = P.kernels[I];
    EXPECT_EQ(D.name, Kernels[I].name) << Where;
    EXPECT_GE(D.sms, 0) << Where;
    EXPECT_GE(D.sm_first, 0) << Where;
    EXPECT_LE(D.sm_first + D.sms, kSms) << Where;
    EXPECT_GE(D.ctas_per_sm, 0) << Where;
    EXPECT_GE(D.bypass_ctas_per_sm, 0) << Where;
    if (D.predicted_np) {
      EXPECT_TRUE(std::isfinite(*D.predicted_np)) << Where;
    }
  }
}

/// Runs \p Info's policy over random epochs of \p M's kernels, as the
/// controller would: each event re-planned by an even plan, each plan the
/// policy returns applied, every plan checked.
void runRandomEpochs(const sim::Mix &M, const online::OnlinePolicyInfo &Info) {
  std::vector<std::string> Names = {"unprofiled"};
  for (const policy::KernelProfile &K : M.controller.kernels)
    Names.push_back(K.name);
  const std::string Name(Info.name);
  const bool Shared = Name == "tlp-dynamic";
  for (unsigned Seed = 1; Seed <= 50 && !::testing::Test::HasFailure();
       ++Seed) {
    std::mt19937 G(Seed);
    const std::string Run = Name + " (seed " + std::to_string(Seed) + ")";
    auto Pick = [&](int N) {
      return std::uniform_int_distribution<int>(0, N - 1)(G);
    };
    const std::shared_ptr<OnlinePolicy> P =
        online::makeOnlinePolicy(Info, M.controller, {});
    std::vector<Live> Kernels;
    unsigned long long NextId = 1;
    double Clock = 0;
    policy::Plan Current;
    Current.num_sms = kSms;
    for (unsigned long long E = 1; E <= 300 && !::testing::Test::HasFailure();
         ++E) {
      // Arrivals and departures (at most 6 kernels at once), each
      // re-planned as the controller does.
      const char *Event = nullptr;
      if (Kernels.size() < 6 && Pick(10) < 2) {
        Live K;
        K.id = NextId++;
        K.name = Names[static_cast<std::size_t>(
            Pick(static_cast<int>(Names.size())))];
        if (Pick(4) == 0)
          K.name += "#" + std::to_string(K.id);
        auto LogUniform = [&](double Lo, double Hi) {
          return std::exp(std::uniform_real_distribution<double>(
              std::log(Lo), std::log(Hi))(G));
        };
        K.rate = LogUniform(0.01, 100);
        K.total =
            static_cast<unsigned long long>(K.rate * LogUniform(1000, 1e6)) + 1;
        Kernels.push_back(K);
        Event = "arrival";
      }
      for (std::size_t I = 0; I < Kernels.size();)
        if (Kernels[I].done >= Kernels[I].total || Pick(20) == 0) {
          Kernels.erase(Kernels.begin() + static_cast<long>(I));
          Event = "departure";
        } else {
          ++I;
        }
      if (Kernels.empty())
        continue;
      if (Event) {
        const policy::Plan Offline = evenPlan(Kernels, Shared);
        const std::optional<policy::Plan> Q = P->onReplan(Event, Offline, {});
        if (Q)
          expectApplicable(*Q, Kernels, Run + " on " + Event);
        Current = Q ? *Q : Offline;
        applyPlan(Current, Kernels);
      }
      const EpochReport R = randomReport(G, Kernels, E, Clock);
      if (std::optional<policy::Plan> Q = P->onEpoch(R, Current)) {
        expectApplicable(*Q, Kernels, Run + " at epoch " + std::to_string(E));
        Current = *Q;
        Current.num_sms = kSms;
        applyPlan(Current, Kernels);
      }
    }
  }
}

TEST(OnlinePolicies, ReturnAnApplicablePlanWhateverTheMeasurements) {
  // The profiled kernels of two mixes (each with a high-priority kernel),
  // one without a profile, and launches named "name#id".
  for (const char *Mix : {"four_sgemm_conv_stream_lbm", "latency_critical"})
    for (const online::OnlinePolicyInfo &Info : online::onlinePolicies())
      runRandomEpochs(sim::testing::mix(Mix), Info);
}

} // namespace
