// Co-runs beside an opaque partition: two rewritten kernels (rowSums,
// smooth3d from tests/kernels/) run on the emulated GPU under the real
// smpart::Controller while an opaque partition (work smpart cannot rewrite,
// in a green context on a real GPU) launches twice on SM ids a seeded
// "driver" picks, not contiguous, the second time at another size, and is
// then removed. The partition's work is modelled by the SMs it holds: from
// the step holdOpaque() reports them clear until its next launch boundary,
// no rewritten kernel may take a block on them. Checked for every policy
// and three seeds: that exclusivity at every take, that no host mask a
// kernel may take blocks under names a held SM at any step, every logical
// block exactly once with the original kernels' outputs, the emulator's
// per-launch protocol checks, and under spatial policies the disjointness
// of the rewritten kernels among themselves (CoConfig::exclusive_sms).
#include "corun_jobs.hpp"
#include "emulation_harness.hpp"

#include "smpart/controller.hpp"
#include "smpart/policy/profile_loader.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <numeric>
#include <random>

namespace {

using namespace smpart;
using smpart::emu::CoKernel;

/// When the partition's work may run on which SMs: [from, to) in steps.
struct Interval {
  unsigned long long from, to;
  SmMask held;
};

/// Forwards launches to the controller (as libsmpart's observer does) and
/// plays the opaque partition: launch boundaries at fixed steps, each
/// polling holdOpaque() until the SMs are clear.
class Observer : public emu::CoObserver {
public:
  Observer(Controller &C, std::vector<unsigned> Ids, std::uint64_t Seed)
      : C(C), Ids(std::move(Ids)), Rng(Seed) {}

  void onLaunch(const std::shared_ptr<emu::EmulatedKernel> &K) override {
    Kernels[K->id()] = K;
    C.onArrival(K);
    checkHostMasks();
  }
  void onLastBlockTaken(unsigned long long Id) override {
    C.onLastBlockTaken(Id);
    Finished[Id] = true;
  }
  void onKnobsApplied(unsigned long long Id) override { C.onKnobsApplied(Id); }
  void onDone(unsigned long long Id) override {
    Finished[Id] = true;
    C.onDeparture(Id);
  }

  /// Every launched kernel with blocks left took blocks already. The
  /// emulator's exclusivity check counts a launch's set-up knobs as its
  /// device knobs until its first CTA publishes newer ones, whereas the
  /// device acknowledges any knobs while no CTA has started (its CTAs read
  /// the host's knobs when they start): so launch boundaries wait until
  /// the kernels run, where the check and the protocol agree.
  bool kernelsRunning() const {
    for (const auto &[Id, K] : Kernels) {
      ControlProgress P;
      K->progress(P);
      if (!P.finished && P.taken == 0)
        return false;
    }
    return !Kernels.empty();
  }

  void onStep(unsigned long long S) override {
    Step = S;
    const bool Boundary =
        Launches == 0
            ? S >= kDeclareAt
            : Running && Launches < 2 && S >= Runs.back().from + kWorkSteps;
    if (Boundary && kernelsRunning()) {
      if (Launches == 0)
        C.addOpaque({"cublas", 2, 2, 1.0});
      // A launch boundary: the previous launch's work is done; the driver
      // gives the target's worth of SMs, in no particular order.
      if (Running)
        Runs.back().to = S;
      Running = false;
      std::vector<unsigned> Pick = Ids;
      std::shuffle(Pick.begin(), Pick.end(), Rng);
      Pick.resize(std::min<std::size_t>(C.opaqueTarget("cublas"), Pick.size()));
      Holding = Pick;
      Waiting = true;
      ++Launches;
    }
    if (Waiting) {
      ++Polls;
      if (C.holdOpaque("cublas", Holding)) {
        Waiting = false;
        Running = true;
        SmMask Held;
        for (unsigned I : Holding)
          Held.set(I);
        Runs.push_back({S, ~0ull, Held});
      }
    }
    if (Running && Launches == 2 && S >= Runs.back().from + kWorkSteps) {
      Runs.back().to = S;
      Running = false;
      C.removeOpaque("cublas");
      Removed = true;
    }
    checkHostMasks();
  }

  /// No host mask a kernel may take blocks under names a held SM.
  void checkHostMasks() {
    SmMask Held;
    for (const OpaqueAllocation &A : C.opaqueAllocations())
      Held |= A.held;
    for (auto &[Id, K] : Kernels) {
      if (Finished[Id])
        continue;
      const Knobs k = K->hostKnobs();
      if (!k.preempt && (detail::loadMask(k) & Held).any())
        ++HostViolations;
    }
  }

  static constexpr unsigned long long kDeclareAt = 30, kWorkSteps = 120;
  Controller &C;
  std::vector<unsigned> Ids;
  std::mt19937_64 Rng;
  std::map<unsigned long long, std::shared_ptr<emu::EmulatedKernel>> Kernels;
  std::map<unsigned long long, bool> Finished;
  std::vector<unsigned> Holding;
  std::vector<Interval> Runs;
  unsigned long long Step = 0, Polls = 0;
  unsigned Launches = 0, HostViolations = 0;
  bool Waiting = false, Running = false, Removed = false;
};

bool spatial(const std::string &P) { return P != "greedy" && P != "tlp"; }

class OpaqueCoRun : public ::testing::TestWithParam<std::string> {};

TEST_P(OpaqueCoRun, PartitionSmsAreNeverTakenWhileItRuns) {
  const std::string PolName = GetParam();
  const policy::Policy *Pol = policy::findPolicy(PolName);
  ASSERT_NE(Pol, nullptr);
  unsigned long long Beside = 0;
  unsigned Resized = 0, Removed = 0;
  const unsigned Seeds = emu::schedulesFromEnv(3);
  for (std::uint64_t Seed = 1; Seed <= Seeds; ++Seed) {
    SCOPED_TRACE("policy " + PolName + ", seed " + std::to_string(Seed));
    emu::CoConfig Cfg;
    Cfg.seed = Seed;
    Cfg.num_sms = 12;
    if (Seed % 2 == 0)
      Cfg.id_span = 264; // sparse %smid values
    Cfg.exclusive_sms = spatial(PolName);
    const std::vector<unsigned> Ids = emu::runCoRun({}, Cfg).sm_ids;

    std::vector<std::string> Warnings;
    ControllerOptions O;
    O.warn = [&](const std::string &W) { Warnings.push_back(W); };
    Controller C(*Pol, policy::loadProfiles(SMPART_CORUN_PROFILES), Ids, O);
    Observer Obs(C, Ids, Seed);
    Cfg.observer = &Obs;

    // 960 and 1,152 blocks: enough for the partition to be granted and
    // resized while both kernels still run.
    emu::corun::RowSumsJob A(8);
    emu::corun::Smooth3dJob B(8);
    const emu::Report OrigA = emu::corun::prepare(A);
    const emu::Report OrigB = emu::corun::prepare(B);
    ASSERT_TRUE(OrigA.ok) << OrigA.error;
    ASSERT_TRUE(OrigB.ok) << OrigB.error;
    std::vector<CoKernel> Ks = {A.make(), B.make()};
    Ks[1].arrive_at_step = 80 + Seed % 17; // while the partition runs
    const emu::CoReport R = emu::runCoRun(Ks, Cfg);
    ASSERT_TRUE(R.ok) << R.error;
    if (Obs.Running)
      Obs.Runs.back().to = R.steps + 1;

    // Exactly once, same results, the per-launch protocol.
    for (std::size_t I = 0; I < R.kernels.size(); ++I) {
      const emu::CoKernelReport &K = R.kernels[I];
      EXPECT_TRUE(K.report.ok) << K.report.error;
      unsigned long long Blocks = 0;
      for (const emu::CoTake &T : K.takes)
        Blocks += T.count;
      EXPECT_EQ(Blocks, Ks[I].grid.x * Ks[I].grid.y * Ks[I].grid.z) << K.name;
    }
    EXPECT_EQ(emu::compareOutputs(A.want, A.outputs(), 0), "");
    EXPECT_EQ(emu::compareOutputs(B.want, B.outputs(), 0), "");

    // The partition's SMs were cleared at its first launch at least (a
    // later one may wait for a kernel past its last block to finish there,
    // until the run ends).
    ASSERT_GE(Obs.Runs.size(), 1u) << "no launch boundary cleared";
    Resized += Obs.Runs.size() == 2 && Obs.Runs[0].held != Obs.Runs[1].held;
    Removed += Obs.Removed;
    // No rewritten take on a held SM while the partition's work runs.
    for (const emu::CoKernelReport &K : R.kernels)
      for (const emu::CoTake &T : K.takes)
        for (const Interval &Run : Obs.Runs) {
          if (T.step < Run.from || T.step >= Run.to)
            continue;
          ++Beside;
          EXPECT_FALSE(Run.held.test(T.sm))
              << K.name << " took a block on SM " << T.sm << " at step "
              << T.step << ", held by the partition from step " << Run.from;
        }
    EXPECT_EQ(Obs.HostViolations, 0u);
    for (const std::string &W : Warnings)
      EXPECT_EQ(W.find("opaque"), std::string::npos) << W;
  }
  // The kernels really ran beside the partition, which was resized at a
  // launch boundary and removed while they ran.
  EXPECT_GT(Beside, 0u);
  EXPECT_GT(Resized, 0u);
  EXPECT_GT(Removed, 0u);
}

INSTANTIATE_TEST_SUITE_P(Policies, OpaqueCoRun,
                         ::testing::Values("even", "greedy", "cd-search",
                                           "hsm-fair", "hsm-qos", "tlp",
                                           "power-aware"),
                         [](const ::testing::TestParamInfo<std::string> &I) {
                           std::string S = I.param;
                           std::replace(S.begin(), S.end(), '-', '_');
                           return S;
                         });

} // namespace
