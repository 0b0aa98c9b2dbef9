#include "corun.hpp"

#include "online_policies.hpp"

#include "sim_kernel.hpp"

#include "smpart/controller.hpp"
#include "smpart/trace.hpp"

#include <algorithm>
#include <cmath>
#include <random>

namespace smpart::sim {

Metrics metricsOf(const std::vector<KernelResult> &Ks) {
  Metrics M;
  if (Ks.empty())
    return M;
  double Min = 1e300, Max = 0;
  for (const KernelResult &K : Ks) {
    M.stp += K.np;
    M.antt += K.np > 0 ? 1 / K.np : 1e9;
    Min = std::min(Min, K.np);
    Max = std::max(Max, K.np);
  }
  M.antt /= static_cast<double>(Ks.size());
  M.fairness = Max > 0 ? Min / Max : 0;
  return M;
}

bool isSpatialPolicy(std::string_view Name) {
  // An online policy keeps its offline base's kind of plan (tlp-dynamic
  // shares every SM, as tlp does).
  if (const online::OnlinePolicyInfo *O = online::findOnlinePolicy(Name))
    return isSpatialPolicy(O->base);
  return Name == "even" || Name == "cd-search" || Name == "hsm-fair" ||
         Name == "hsm-qos" || Name == "power-aware";
}

namespace {
struct Slot {
  std::shared_ptr<SimKernel> kernel;
  KernelResult result;
  int last_block_events = 0, departures = 0;
  double done_seen = 0;
  const Launch *launch = nullptr;
  bool rerun = false;      ///< a re-launch (RunOptions::relaunch): no result
  bool relaunched = false; ///< its re-launch was decided (at departure)
  double ran_us = 0;       ///< time it took blocks (RunOptions::relaunch)
  double company_us = 0;   ///< of which beside another first run
};
} // namespace

RunResult runMix(const Mix &M, const policy::Policy &P, const RunOptions &O) {
  const SimSettings &S = M.sim;
  double Now = 0;
  if (O.trace) {
    O.trace->setClockForTesting([&Now] { return Now; });
    O.trace->setFlushIntervalMs(-1);
  }
  std::vector<KernelTraits> Traits;
  for (std::size_t I = 0; I < M.truth.kernels.size(); ++I)
    Traits.push_back(traitsOf(M.truth, I));
  auto TraitsOf = [&](const std::string &Name) -> const KernelTraits & {
    for (const KernelTraits &T : Traits)
      if (T.profile->name == Name)
        return T;
    return Traits.front(); // loadMix checked every name
  };
  std::vector<unsigned> Ids;
  SmMask All;
  for (int I = 0; I < M.truth.gpu.num_sms && I < static_cast<int>(kMaxSms);
       ++I) {
    Ids.push_back(static_cast<unsigned>(I));
    All.set(static_cast<std::size_t>(I));
  }
  ControllerOptions CO;
  CO.trace = O.trace;
  CO.warn = [](const std::string &) {}; // unprofiled kernels warn by design
  CO.epoch_us = O.epoch_us;
  CO.online = O.online;
  Controller C(P, M.controller, Ids, CO);
  ContentionModel Model(M.truth.gpu);

  std::mt19937_64 Rng(S.seed);
  std::normal_distribution<double> Gauss(0.0, 1.0);
  RunResult R;
  std::vector<Slot> Slots;
  std::vector<Placement> Places;
  std::vector<double> Rates;
  std::vector<std::size_t> Running;
  std::size_t Next = 0;
  double NextEpoch = 0;
  auto Arrive = [&](const Launch &L, bool Rerun) {
    Slot X;
    const KernelTraits &T = TraitsOf(L.kernel);
    const double Blocks = L.blocks > 0 ? L.blocks : T.total;
    X.kernel = std::make_shared<SimKernel>(Slots.size() + 1, L.kernel, T,
                                           Blocks, All, Now, S.ack_us);
    X.launch = &L;
    X.rerun = Rerun;
    X.result.name = L.kernel;
    X.result.id = Slots.size() + 1;
    X.result.arrival_us = Now;
    X.result.alone_us = T.aloneUs() * Blocks / T.total;
    Slots.push_back(X);
    C.onArrival(Slots.back().kernel);
    Slots.back().kernel->started();
  };
  // A first run is still going (or yet to come): a re-launch has
  // co-runners to keep company.
  auto FirstRunsLeft = [&] {
    return Next < M.launches.size() ||
           std::any_of(
               Slots.begin(), Slots.end(),
               [](const Slot &X) { return !X.rerun && X.departures == 0; });
  };
  C.epoch(0);
  NextEpoch = O.epoch_us;
  while (Now < S.max_us) {
    // Arrivals: announced before their first CTA, as libsmpart does.
    while (Next < M.launches.size() && M.launches[Next].at_us <= Now)
      Arrive(M.launches[Next++], false);
    // Acknowledgements the device sends (libsmpart's notice thread).
    for (Slot &X : Slots)
      if (X.departures == 0 && X.kernel->settle())
        C.onKnobsApplied(X.kernel->id());
    // The model: rates of what runs now.
    Places.clear();
    Running.clear();
    for (std::size_t I = 0; I < Slots.size(); ++I) {
      SimKernel &K = *Slots[I].kernel;
      if (!K.runsNow())
        continue;
      Placement Pl;
      Pl.traits = &K.traits();
      Pl.mask = K.device().mask;
      Pl.ctas = K.device().ctas_per_sm;
      Pl.bypass = K.device().bypass_ctas_per_sm;
      Places.push_back(Pl);
      Running.push_back(I);
    }
    Model.rates(Places, Rates);
    if (O.spatial) {
      SmMask Seen;
      bool Shared = false;
      for (std::size_t I : Running) {
        // A kernel whose last block was taken takes no block any more: its
        // SMs go to others at once (SiM Sec. 3.2).
        if (Slots[I].kernel->lastBlockTaken())
          continue;
        const SmMask Reach = Slots[I].kernel->reach();
        Shared = Shared || (Seen & Reach).any();
        Seen |= Reach;
      }
      R.shared_sm_steps += Shared;
    }
    // Company: a first run other than itself takes blocks beside it.
    if (O.relaunch) {
      std::size_t FirstRunsGoing = 0;
      for (const Slot &X : Slots)
        FirstRunsGoing +=
            !X.rerun && X.departures == 0 && X.kernel->reach().any();
      for (std::size_t I : Running) {
        Slot &X = Slots[I];
        if (!X.kernel->reach().any())
          continue;
        const bool Self = !X.rerun && X.departures == 0;
        X.ran_us += S.dt_us;
        X.company_us += FirstRunsGoing > (Self ? 1u : 0u) ? S.dt_us : 0;
      }
    }
    Now += S.dt_us;
    for (std::size_t J = 0; J < Running.size(); ++J) {
      Slot &X = Slots[Running[J]];
      double Rate = Rates[J];
      if (O.noise && S.noise > 0)
        Rate *= std::clamp(1 + S.noise * Gauss(Rng), 0.5, 1.5);
      const double Want = Rate * S.dt_us;
      const double Ran = X.kernel->run(Want);
      if (X.kernel->finished() && X.result.finish_us == 0)
        // The step's share that finished the grid.
        X.result.finish_us =
            Now - S.dt_us + (Want > 0 ? Ran / Want : 1) * S.dt_us;
    }
    // Events, as libsmpart's notice thread delivers them.
    for (Slot &X : Slots) {
      SimKernel &K = *X.kernel;
      if (K.doneBlocks() < X.done_seen)
        ++R.exactly_once_violations;
      X.done_seen = K.doneBlocks();
      if (X.departures)
        continue;
      if (K.lastBlockTaken() && X.last_block_events == 0) {
        ++X.last_block_events;
        C.onLastBlockTaken(K.id());
      }
      if (K.finished()) {
        ++X.departures;
        C.onDeparture(K.id());
      }
    }
    // The papers' methodology: a one-shot kernel that finished while a
    // first run goes on is launched again, so that run keeps its company.
    // Only where it had company for most of its own run: a plan that held
    // the other kernels while it ran (a priority policy preempting
    // best-effort work, power-aware's queue of rounds) serialises them,
    // and re-launching it would hold them for ever. Slots grows: by index.
    if (O.relaunch)
      for (std::size_t I = 0, N = Slots.size(); I < N; ++I) {
        Slot &X = Slots[I];
        if (X.departures != 1 || X.relaunched || X.launch->periodic)
          continue;
        X.relaunched = true; // decided once, at its departure
        if (!FirstRunsLeft() ||
            (Next == M.launches.size() && X.company_us < 0.5 * X.ran_us))
          continue;
        ++R.relaunches;
        Arrive(*X.launch, true);
      }
    if (Now >= NextEpoch) {
      C.epoch(Now);
      ++R.epochs;
      NextEpoch += O.epoch_us;
    }
    // Re-launches still running then are cut off.
    if (!FirstRunsLeft()) {
      R.completed = true;
      break;
    }
  }
  for (Slot &X : Slots) {
    // A re-launch cut off at the end may have taken its last block
    // without finishing: one event for each thing that happened.
    if (X.departures != (X.kernel->finished() ? 1 : 0) ||
        X.last_block_events != (X.kernel->lastBlockTaken() ? 1 : 0) ||
        (X.kernel->finished() && X.kernel->doneBlocks() != X.kernel->total()))
      ++R.exactly_once_violations;
    const double Took = X.result.finish_us - X.result.arrival_us;
    X.result.np =
        X.kernel->finished() && Took > 0 ? X.result.alone_us / Took : 0;
    if (!X.rerun)
      R.kernels.push_back(X.result);
  }
  R.metrics = metricsOf(R.kernels);
  R.end_us = Now;
  if (O.trace) // the writer outlives this clock
    O.trace->setClockForTesting([End = Now] { return End; });
  R.decisions = C.decisionCount();
  R.deferred_grants = C.deferredGrants();
  return R;
}

RunResult runPolicy(const Mix &M, std::string_view Name, RunOptions O) {
  const online::OnlinePolicyInfo *Online = online::findOnlinePolicy(Name);
  const policy::Policy *P = policy::findPolicy(Online ? Online->base : Name);
  if (!P)
    throw std::invalid_argument("unknown policy " + std::string(Name));
  if (Online)
    O.online = online::makeOnlinePolicy(*Online, M.controller, {});
  return runMix(M, *P, O);
}

std::vector<std::string> policyNames() {
  std::vector<std::string> Names;
  for (const policy::Policy *P : policy::allPolicies())
    Names.emplace_back(P->name());
  for (const online::OnlinePolicyInfo &I : online::onlinePolicies())
    Names.emplace_back(I.name);
  return Names;
}

} // namespace smpart::sim
