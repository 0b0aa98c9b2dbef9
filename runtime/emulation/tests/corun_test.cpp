// Co-run tests of the CPU emulation: 2-4 rewritten kernels (tests/kernels/
// reduce.smpart.cu: rowSums, profiled as the compute-bound kind, and
// smooth3d, profiled as the memory-bound kind; tests/corun_profiles.json)
// run concurrently on one emulated GPU under the real smpart::Controller,
// for every policy and several seeds. The first kernel launches at once,
// the others arrive mid-run. Checked: every logical block of every kernel
// exactly once and outputs equal to the original kernels'; the emulator's
// per-launch protocol checks; under spatial policies, disjoint host masks
// at every step and no device-level overlap: at every take, no other kernel
// with blocks left has device knobs that allow the SM (an SM moves only
// after the kernel leaving it acknowledged); an arrival shrinks the running
// kernels, whose CTAs then take blocks only on the new set; the SMs of a
// kernel that leaves the plan go to the kernels still taking blocks (or
// wait for an acknowledgement to do so); the trace is valid JSON with
// arrival, start, last-block and done events for every kernel and decision
// events. The online policies (smpart::online::onlinePolicies(), over their
// base policies) run the same co-runs with epochs closed every 100 us of
// the emulation's clock while the kernels run: the same checks hold under
// their online steps, the epochs count blocks for every kernel they
// measure, and each policy that acts here makes a decision with trigger
// "epoch".
#include "corun_jobs.hpp"
#include "emulation_harness.hpp"

#include "online_policies.hpp"
#include "smpart/controller.hpp"
#include "smpart/policy/profile_loader.hpp"
#include "smpart/trace.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <numeric>
#include <ostream>
#include <set>

namespace {

using namespace smpart;
using smpart::emu::CoKernel;
using smpart::emu::corun::Job;
using smpart::emu::corun::RowSumsJob;
using smpart::emu::corun::Smooth3dJob;

/// Policies whose plans give each kernel its own SM range.
bool spatial(const std::string &p) {
  return p == "even" || p == "cd-search" || p == "hsm-fair" || p == "hsm-qos" ||
         p == "power-aware";
}

/// What the controller did, observed on the emulated host knobs.
struct Shrink {
  unsigned long long id;
  SmMask before, after;
  std::size_t running;        ///< kernels planned before the arrival
  unsigned long long arrival; ///< the arriving kernel
};
struct GiveBack {
  unsigned long long departed;
  SmMask freed, others, planned;
};

SmMask hostMask(const emu::EmulatedKernel &K) {
  const Knobs k = K.hostKnobs();
  return detail::loadMask(k);
}

/// The SMs the controller gives a kernel that may take blocks: its host
/// mask, plus those that wait for another kernel's acknowledgement; none
/// for a kernel it preempted (or that took its last block).
SmMask allotted(const KernelAllocation &A, const emu::EmulatedKernel &K) {
  if (A.last_block_taken)
    return {};
  return (A.preempted ? SmMask() : hostMask(K)) | A.waiting;
}

/// The emulator's observer: forwards to the controller (as libsmpart's
/// ControllerObserver does) and records masks around arrivals, and when a
/// kernel leaves the plan (last block taken) or departs.
class Observer : public emu::CoObserver {
public:
  explicit Observer(Controller &C) : C(C) {}
  void onLaunch(const std::shared_ptr<emu::EmulatedKernel> &K) override {
    std::map<unsigned long long, SmMask> before;
    for (const KernelAllocation &A : C.allocations())
      if (allotted(A, *Kernels.at(A.id)).any())
        before[A.id] = allotted(A, *Kernels.at(A.id));
    Kernels[K->id()] = K;
    C.onArrival(K);
    for (const KernelAllocation &A : C.allocations()) {
      auto It = before.find(A.id);
      const SmMask After = allotted(A, *Kernels.at(A.id));
      if (It != before.end() && After.any())
        Shrinks.push_back({A.id, It->second, After, before.size(), K->id()});
      if (A.id == K->id())
        Admitted[A.id] = After.any();
    }
  }
  void onLastBlockTaken(unsigned long long Id) override {
    leaving(Id, [&] { C.onLastBlockTaken(Id); });
  }
  void onKnobsApplied(unsigned long long Id) override { C.onKnobsApplied(Id); }
  void onDone(unsigned long long Id) override {
    leaving(Id, [&] { C.onDeparture(Id); });
  }
  /// A kernel leaves the plan: its SMs go to the kernels still taking
  /// blocks, in their masks or waiting for an acknowledgement.
  template <class Event> void leaving(unsigned long long Id, Event event) {
    bool planned = false;
    for (const KernelAllocation &A : C.allocations())
      planned |= A.id == Id && !A.last_block_taken && !A.preempted;
    GiveBack G;
    G.departed = Id;
    for (unsigned S : SmIds)
      G.freed.set(S);
    G.freed &= hostMask(*Kernels.at(Id));
    event();
    auto H = Held.find(Id);
    if (H != Held.end()) {
      // Departed after its SMs were held for it: they go back now.
      G.freed = H->second;
      Held.erase(H);
    } else if (!planned) {
      return; // left the plan earlier: its SMs were given then
    }
    bool any = false;
    for (const KernelAllocation &A : C.allocations())
      if (A.id != Id && allotted(A, *Kernels.at(A.id)).any()) {
        G.others |= allotted(A, *Kernels.at(A.id));
        any = true;
      }
    const policy::Plan P = C.lastPlan();
    for (const policy::KernelDecision &D : P.kernels)
      for (int i = D.sm_first; i < D.sm_first + D.sms; ++i)
        if (i >= 0 && static_cast<std::size_t>(i) < SmIds.size())
          G.planned.set(SmIds[static_cast<std::size_t>(i)]);
    // Online policies with a latency-critical kernel (priority's hold)
    // keep its SMs out of every plan until it departs, so that no
    // best-effort CTA runs beside its last blocks: SMs that the plan made
    // at its last block gives to nobody are checked when it departs.
    if (HoldUntilDone && planned) {
      const SmMask Kept = G.freed & ~G.planned & ~G.others;
      if (Kept.any()) {
        Held[Id] = Kept;
        G.freed &= ~Kept;
      }
    }
    if (any)
      GiveBacks.push_back(G);
  }
  void onStep(unsigned long long S) override {
    Step = S;
    // Online policies: close an epoch every EpochSteps steps of the
    // emulation's clock, between scheduler steps (as libsmpart's timer
    // thread does between a CTA's yields); the first call opens one.
    if (EpochSteps > 0 && (S == 1 || S % EpochSteps == 0))
      C.epoch(static_cast<double>(S) * kUsPerStep);
  }

  /// The emulation's clock: every scheduler step advances it by 200 ns
  /// (corun.cpp), the time globaltimer reads on the emulated device.
  static constexpr double kUsPerStep = 0.2;

  Controller &C;
  unsigned long long EpochSteps = 0; ///< 0: no epochs (offline policies)
  /// SMs held for a kernel that took its last block are checked when it
  /// departs (online policies).
  bool HoldUntilDone = false;
  std::map<unsigned long long, SmMask> Held;
  /// Whether each kernel was given SMs at its arrival.
  std::map<unsigned long long, bool> Admitted;
  std::vector<unsigned> SmIds;
  unsigned long long Step = 0;
  std::map<unsigned long long, std::shared_ptr<emu::EmulatedKernel>> Kernels;
  std::vector<Shrink> Shrinks;
  std::vector<GiveBack> GiveBacks;
};

std::string maskText(const SmMask &M) {
  std::string s;
  for (unsigned i : smIds(M))
    s += (s.empty() ? "" : ",") + std::to_string(i);
  return "{" + s + "}";
}

struct Totals {
  unsigned runs = 0, observed_shrinks = 0, shrinks = 0, give_backs = 0;
  /// Online policies: decisions traced with trigger "epoch", knob writes
  /// they made, epochs closed while kernels were planned, arrivals given
  /// no SMs.
  unsigned long long epoch_decisions = 0, epoch_knob_writes = 0,
                     measured_epochs = 0, steps = 0, waited_arrivals = 0;
  unsigned long long overlap_takes = 0, shared_sm_takes = 0, takes = 0,
                     deferred = 0;
  std::set<std::string> fallbacks; ///< controller warnings: policy -> even
};

/// A co-run's policy: an offline one (`online` empty), or an online one
/// of smpart::online::onlinePolicies() over its base policy (`policy`).
struct Param {
  std::string policy;
  unsigned kernels;
  std::string online;
  int scale = 1; ///< grid size factor of both kernels
};
void PrintTo(const Param &p, std::ostream *os) {
  *os << (p.online.empty() ? p.policy : p.online + " over " + p.policy) << " x"
      << p.kernels << " (scale " << p.scale << ")";
}

/// Epoch length of the online runs: the shortest the controller accepts
/// from SMPART_EPOCH_US, 500 steps of the emulation's clock. Online runs
/// use eight times the blocks (`scale`): the progress mirror moves only at
/// a CTA's poll between chunks, and a block takes ~2,000 steps here (dozens
/// of CTAs interleave), so with the small grids each kernel's count moved
/// in 2-3 epochs and tlp-dynamic, which needs every kernel progressing in
/// one epoch, never acted. At scale 4 the runs (16-30 epochs once every
/// CTA claims its next chunk ahead, which also moves each kernel's last
/// block taken a chunk per CTA earlier) end before tlp-dynamic's first trial
/// is worth its epoch; scale 8 gives it 30-60 epochs at little more cost.
constexpr double kEpochUs = MinEpochUs;

/// One co-run of `n` kernels under `p`'s policy with `seed`; EXPECTs its
/// properties and adds to `t`.
void runOne(const Param &p, unsigned n, std::uint64_t seed, Totals &t) {
  const std::string &policyName = p.policy;
  const std::string label = p.online.empty() ? policyName : p.online;
  SCOPED_TRACE("policy " + label + ", " + std::to_string(n) +
               " kernels, seed " + std::to_string(seed));
  const policy::Policy *Pol = policy::findPolicy(policyName);
  ASSERT_NE(Pol, nullptr);
  // The online policy's base decides whether SMs are shared: tlp-dynamic
  // shares them as tlp does, the others partition them.
  const bool Spatial = spatial(policyName);

  std::vector<std::unique_ptr<Job>> jobs;
  for (unsigned i = 0; i < n; ++i) {
    if (i % 2 == 0)
      jobs.push_back(std::make_unique<RowSumsJob>(p.scale));
    else
      jobs.push_back(std::make_unique<Smooth3dJob>(p.scale));
    const emu::Report o = emu::corun::prepare(*jobs.back());
    ASSERT_TRUE(o.ok) << o.error;
  }

  emu::CoConfig cfg;
  cfg.seed = seed;
  cfg.num_sms = 12;
  if (seed % 2 == 0)
    cfg.id_span = 264; // sparse %smid values over nine mask words
  cfg.exclusive_sms = Spatial;
  // The GPU's SM ids: runCoRun draws them from the seed; a co-run with no
  // kernel reports them.
  const std::vector<unsigned> ids = emu::runCoRun({}, cfg).sm_ids;

  policy::ProfileSet Profiles = policy::loadProfiles(SMPART_CORUN_PROFILES);
  const std::string tracePath = ::testing::TempDir() + "corun-" + label + "-" +
                                std::to_string(n) + "-" + std::to_string(seed) +
                                ".json";
  std::string err;
  auto Trace = trace::TraceWriter::open(tracePath, &err);
  ASSERT_TRUE(Trace) << err;
  Trace->setFlushIntervalMs(-1);
  std::vector<std::string> Warnings;
  ControllerOptions O;
  O.trace = Trace.get();
  O.warn = [&](const std::string &W) { Warnings.push_back(W); };
  if (!p.online.empty()) {
    const online::OnlinePolicyInfo *Info = online::findOnlinePolicy(p.online);
    ASSERT_NE(Info, nullptr);
    O.epoch_us = kEpochUs;
    O.online = online::makeOnlinePolicy(*Info, Profiles, O.policy_options);
  }
  auto C = std::make_unique<Controller>(*Pol, Profiles, ids, O);
  Observer Obs(*C);
  Obs.SmIds = ids;
  Obs.HoldUntilDone = O.online != nullptr;
  if (O.online)
    Obs.EpochSteps = static_cast<unsigned long long>(
        std::llround(kEpochUs / Observer::kUsPerStep));
  std::sort(Obs.SmIds.begin(), Obs.SmIds.end());
  Trace->setClockForTesting([&Obs] { return static_cast<double>(Obs.Step); });
  cfg.observer = &Obs;

  std::vector<CoKernel> ks;
  for (unsigned i = 0; i < n; ++i) {
    ks.push_back(jobs[i]->make());
    // Mid-run arrivals; the seed moves them a little.
    ks.back().arrive_at_step = i == 0 ? 0 : 60 * i + seed % 17;
  }
  const emu::CoReport r = emu::runCoRun(ks, cfg);
  ASSERT_TRUE(r.ok) << r.error;
  ++t.runs;
  t.steps += r.steps;
  for (const auto &a : Obs.Admitted)
    t.waited_arrivals += !a.second;
  t.overlap_takes += r.overlap_takes;
  t.shared_sm_takes += r.shared_sm_takes;
  t.deferred += C->deferredGrants();

  // Every kernel ran every block once (the emulator checks each take and
  // the final counters) and computed what the original computes.
  for (unsigned i = 0; i < n; ++i) {
    const emu::CoKernelReport &k = r.kernels[i];
    EXPECT_TRUE(k.report.ok) << k.report.error;
    EXPECT_GT(k.done_step, 0u) << k.name << " never completed";
    unsigned long long blocks = 0;
    for (const emu::CoTake &tk : k.takes)
      blocks += tk.count;
    t.takes += k.takes.size();
    EXPECT_EQ(blocks, ks[i].grid.x * ks[i].grid.y * ks[i].grid.z) << k.name;
    const std::string diff =
        emu::compareOutputs(jobs[i]->want, jobs[i]->outputs(), 0);
    EXPECT_EQ(diff, "") << k.name << " #" << i;
  }
  // Later kernels really arrived while the first one was running.
  for (unsigned i = 1; i < n; ++i)
    EXPECT_LT(r.kernels[i].arrived_step, r.kernels[0].done_step)
        << "kernel " << i << " arrived after kernel 0 completed";

  if (Spatial) {
    EXPECT_GT(r.host_disjoint_checks, 0u);
    // An arrival takes SMs from the running kernels: under even, cd-search
    // and hsm-fair each one shrinks (to fewer SMs, not always a subset:
    // ranges move); hsm-qos keeps the high-priority kernel's share, so at
    // least one shrinks; power-aware pairs kernels and queues the rest, so
    // only its first arrival must shrink one; priority gives a
    // latency-critical kernel the SMs its curve needs and preempts the
    // best-effort ones for them, so a best-effort kernel arriving beside it
    // may wait with no SMs and shrink nobody. Once a shrunk kernel's device
    // publishes a knob epoch inside the new set, its CTAs take blocks only
    // there.
    std::map<unsigned long long, unsigned> shrunkAt, runningAt;
    SmMask gpu;
    for (unsigned S : ids)
      gpu.set(S);
    const bool Priority = p.online == "priority";
    for (const Shrink &s : Obs.Shrinks) {
      const bool every =
          policyName != "hsm-qos" && policyName != "power-aware" && !Priority;
      if (policyName == "power-aware" && s.running > 1)
        continue;
      if (!Priority || Obs.Admitted[s.arrival])
        runningAt[s.arrival] = 1;
      if (!every && s.after.count() >= s.before.count())
        continue;
      ++t.shrinks;
      ++shrunkAt[s.arrival];
      EXPECT_LT(s.after.count(), s.before.count())
          << "kernel " << s.id << " kept " << maskText(s.after)
          << " when kernel " << s.arrival << " arrived";
      // The new set names only SMs this GPU has: the controller maps plan
      // positions onto the (sparse) %smid values. That a take under an
      // epoch published inside the set stays in it is the emulator's mask
      // check on every decision, not repeated here.
      EXPECT_TRUE((s.after & ~gpu).none())
          << "kernel " << s.id << " was given " << maskText(s.after & ~gpu)
          << ", which are not SM ids of this GPU";
      const emu::CoKernelReport &k = r.kernels[s.id - 1];
      std::set<unsigned> inside; // epochs published within the new set
      for (const emu::CoPublish &p : k.published)
        if ((p.mask & ~s.after).none() && !p.preempt)
          inside.insert(p.epoch);
      bool observed = false;
      for (const emu::CoTake &tk : k.takes)
        observed |= inside.count(tk.epoch) != 0;
      t.observed_shrinks += observed;
    }
    for (const auto &a : runningAt)
      EXPECT_GT(shrunkAt[a.first], 0u)
          << "no running kernel shrank when kernel " << a.first << " arrived";
  }
  // A departed kernel's SMs go to the kernels still taking blocks: every
  // freed SM the new plan assigns is in a remaining kernel's mask, and
  // every policy but the power-saving ones assigns them all.
  for (const GiveBack &g : Obs.GiveBacks) {
    ++t.give_backs;
    const SmMask lost = g.freed & g.planned & ~g.others;
    EXPECT_TRUE(lost.none())
        << "SMs " << maskText(lost) << " of departed kernel " << g.departed
        << " are planned but in no mask";
    if (policyName != "power-aware" && policyName != "cd-search") {
      EXPECT_TRUE((g.freed & ~g.others).none())
          << "SMs " << maskText(g.freed & ~g.others) << " of departed kernel "
          << g.departed << " given to no kernel";
    }
  }

  // The trace: valid JSON with the expected events.
  C.reset();
  ASSERT_TRUE(Trace->flush(&err)) << err;
  Trace.reset();
  std::ifstream in(tracePath);
  nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << tracePath << " is not valid JSON";
  EXPECT_EQ(doc["otherData"]["schema"], "smpart.trace/1");
  std::map<unsigned long long, std::set<std::string>> seen;
  unsigned decisions = 0;
  double epochDecisionAt = -1; // trace time of the last epoch decision
  /// Blocks the epochs counted for each kernel while it was planned.
  std::map<unsigned long long, unsigned long long> epochBlocks;
  for (const auto &e : doc["traceEvents"]) {
    const std::string name = e.value("name", ""), ph = e.value("ph", "");
    const double ts = e.value("ts", -2.0);
    if (name == "decision")
      ++decisions;
    if (name == "decision" && e["args"].value("trigger", "") == "epoch") {
      ++t.epoch_decisions;
      epochDecisionAt = ts;
    } else if (name == "decision") {
      epochDecisionAt = -1;
    }
    // The trace clock is the scheduler step: knob writes at the step of an
    // epoch decision, after it, are the online step's.
    if (name == "knob" && ts == epochDecisionAt)
      ++t.epoch_knob_writes;
    if (name == "epoch" && !e["args"]["kernels"].empty()) {
      ++t.measured_epochs;
      for (const auto &k : e["args"]["kernels"])
        epochBlocks[k.value("kernel_id", 0ull)] += k.value("blocks", 0ull);
    }
    if (!e.contains("args") || !e["args"].contains("kernel_id"))
      continue;
    const auto id = e["args"]["kernel_id"].get<unsigned long long>();
    if (e.value("cat", "") != "kernel")
      continue;
    if (ph == "b")
      seen[id].insert("arrival");
    else if (ph == "e")
      seen[id].insert("done");
    else
      seen[id].insert(name);
  }
  // Epochs saw every kernel progress while it was planned, whether or not
  // its CTAs left (persistent CTAs leave only at a shrink, a preemption or
  // the end): the controller reads executed blocks from the blocks taken.
  for (const auto &b : epochBlocks)
    EXPECT_GT(b.second, 0u) << "kernel " << b.first
                            << " was measured in epochs that counted no block";
  for (const emu::CoKernelReport &k : r.kernels)
    EXPECT_EQ(seen[k.id], (std::set<std::string>{"arrival", "start",
                                                 "last_block_taken", "done"}))
        << "trace events of kernel " << k.name << " #" << k.id;
  EXPECT_GE(decisions, n) << "one decision per arrival at least";
#ifdef SMPART_CHECK_FORMAT
  const std::string cmd = std::string(SMPART_PYTHON) + " " +
                          SMPART_CHECK_FORMAT + " trace " + tracePath;
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
#endif
  for (const std::string &w : Warnings)
    if (w.find("using even") != std::string::npos)
      t.fallbacks.insert(w);
  if (!::testing::Test::HasFailure())
    std::remove(tracePath.c_str());
  else
    for (const std::string &w : Warnings)
      ADD_FAILURE() << "controller warning: " << w;
}

/// Whether the online policy is expected to change knobs at an epoch in
/// these co-runs (with every seed together). Not so:
///  - priority: its epoch rule preempts the best-effort kernels when a
///    latency-critical kernel runs slower than alone beside them, but here
///    rowSums' curve asks for every SM, so none runs beside it (its work is
///    done at the re-plans of arrivals and departures);
///  - hsm-qos-online with 2 kernels: the offline plan (10 SMs for the
///    high-priority rowSums) already meets its NP target by the curve the
///    online step predicts from, so it keeps that plan.
bool actsOnEpochs(const Param &p) {
  if (p.online == "priority")
    return false;
  return !(p.policy == "hsm-qos" && p.kernels == 2);
}

class CoRun : public ::testing::TestWithParam<Param> {};

TEST_P(CoRun, ControllerRepartitionsLive) {
  const Param p = GetParam();
  const std::string label = p.online.empty() ? p.policy : p.online;
  Totals t;
  const unsigned seeds = emu::schedulesFromEnv(3);
  for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
    runOne(p, p.kernels, seed, t);
    if (::testing::Test::HasFatalFailure())
      return;
  }
  EXPECT_EQ(t.runs, seeds);
  // Priority preempts the best-effort kernels for the latency-critical one
  // (whose curve asks for every SM here) instead of shrinking them; they
  // wait with no SMs and get them back when it departs.
  const bool Priority = p.online == "priority";
  if (spatial(p.policy) && !Priority) {
    EXPECT_GT(t.shrinks, 0u) << "no arrival shrank a running kernel";
    if (p.policy != "power-aware") { // its pairs often finish first
      EXPECT_GT(t.observed_shrinks, 0u)
          << "no shrunk kernel took blocks under its new knobs";
    }
  }
  if (spatial(p.policy)) {
    EXPECT_GT(t.give_backs, 0u) << "no departure while another kernel ran";
    // Arrivals mid-run take SMs from running kernels, so some grant must
    // have waited for an acknowledgement (and every run still completed).
    if (!Priority) {
      EXPECT_GT(t.deferred, 0u) << "no grant waited for an acknowledgement";
    }
  }
  if (Priority) {
    EXPECT_GT(t.waited_arrivals, 0u)
        << "no best-effort kernel waited beside the latency-critical one";
  }
  if (!p.online.empty()) {
    EXPECT_GT(t.measured_epochs, 0u) << "no epoch measured a running kernel";
    // An online step may leave every knob as it was (a classification
    // epoch on the even split; a CTA-per-SM step above the kernel's
    // occupancy, which the controller clamps): its knob writes are
    // printed, not required.
    if (actsOnEpochs(p)) {
      EXPECT_GT(t.epoch_decisions, 0u) << "no online step (trigger \"epoch\")";
    }
  }
  RecordProperty("overlap_takes", std::to_string(t.overlap_takes));
  RecordProperty("shared_sm_takes", std::to_string(t.shared_sm_takes));
  std::printf("[ corun ] %s x%u: %u runs, %llu takes, %u shrinks (%u observed "
              "on the device), %u give-backs, %llu grants waited for an "
              "acknowledgement, %llu device-level overlaps, %llu takes beside "
              "another kernel's CTA\n",
              label.c_str(), p.kernels, t.runs, t.takes, t.shrinks,
              t.observed_shrinks, t.give_backs, t.deferred, t.overlap_takes,
              t.shared_sm_takes);
  if (!p.online.empty())
    std::printf("[ corun ]   %llu epochs measured over %llu steps, %llu "
                "decisions with trigger \"epoch\" writing %llu knobs, %llu "
                "arrivals given no SMs\n",
                t.measured_epochs, t.steps, t.epoch_decisions,
                t.epoch_knob_writes, t.waited_arrivals);
  for (const std::string &w : t.fallbacks)
    std::printf("[ corun ]   fell back: %s\n", w.c_str());
}

std::vector<Param> params() {
  std::vector<Param> out;
  for (const char *pol : {"even", "greedy", "cd-search", "hsm-fair", "hsm-qos",
                          "tlp", "power-aware"})
    for (unsigned n : {2u, 3u, 4u})
      out.push_back({pol, n, ""});
  for (const online::OnlinePolicyInfo &I : online::onlinePolicies())
    for (unsigned n : {2u, 3u, 4u})
      out.push_back({std::string(I.base), n, std::string(I.name), 8});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Policies, CoRun, ::testing::ValuesIn(params()),
                         [](const ::testing::TestParamInfo<Param> &i) {
                           std::string s =
                               (i.param.online.empty() ? i.param.policy
                                                       : i.param.online) +
                               "_" + std::to_string(i.param.kernels) +
                               "_kernels";
                           for (char &c : s)
                             if (c == '-')
                               c = '_';
                           return s;
                         });

} // namespace
