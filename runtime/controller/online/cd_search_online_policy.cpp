// CD-search online (cd_search_online_policy.hpp; controller README,
// "Online CD-search").
//
// One iteration of the paper (20K cycles of warm-up, 20K of profiling) is
// two epochs here: the controller marks the epoch in which a step's knobs
// were written as not steady (the warm-up: SMs change hands, caches
// refill) and the next one as steady (the profiling); every decision is
// taken on an epoch in which every kernel was steady.
#include "cd_search_online_policy.hpp"
#include "report_kernels.hpp"

#include "smpart/policy/curves.hpp"
#include "smpart/policy/policy.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace smpart::online {

using policy::KernelDecision;
using policy::Plan;

const char *CdSearchOnlinePolicy::className(Class C) {
  switch (C) {
  case Class::Compute:
    return "compute";
  case Class::Memory:
    return "memory";
  case Class::Cache:
    return "cache";
  case Class::Unknown:
    break;
  }
  return "unknown";
}

CdSearchOnlinePolicy::CdSearchOnlinePolicy(policy::ProfileSet P,
                                           CdSearchOnlineOptions O)
    : Profiles(std::move(P)), Opts(O) {}

const policy::KernelProfile *
CdSearchOnlinePolicy::profileOf(const std::string &Name) const {
  return profileWithCurve(Profiles, Name);
}

// Sec. 4.1.2 classifies with the off-SM bandwidth model: memory-intensive
// when the SMs' bandwidth demand (Eq. 1, from the measured LLC APKI)
// exceeds what the off-SM system supplies (Eq. 2, from the measured LLC
// hit rate). No NVIDIA GPU gives a co-running controller per-kernel LLC
// counters, so the two sides of that inequality are read from what an
// epoch measures: a kernel slowed on SMs of its own (its rate on the share
// below its isolated rate there) is one whose demand the shared off-SM
// system does not meet beside these co-runners; and a kernel whose own
// curve no longer scales at the share (the second half of its SMs gains
// less than saturated_gain) has a demand above the supply even alone,
// which is what Fig. 7(b) shows of the paper's memory-intensive kernels.
CdSearchOnlinePolicy::Class
CdSearchOnlinePolicy::classify(const EpochSample &S, int N,
                               std::string &Why) const {
  const policy::KernelProfile *P = profileOf(S.name);
  if (!P || S.sms == 0) {
    Why = policy::formatNote("%s: no profile curve: keeps its %u SMs",
                             S.name.c_str(), S.sms);
    return Class::Unknown;
  }
  const double Gain = policy::perfAtSms(*P, S.sms) /
                      policy::perfAtSms(*P, std::max(1.0, S.sms / 2.0));
  const bool Starved = S.np > 0 && S.np < 1 - Opts.loss;
  const bool Saturated = Gain < Opts.saturated_gain;
  Class C = Class::Compute;
  if (Starved || Saturated)
    // LAVAMD's case (Sec. 4.1.1): high LLC traffic that mostly hits is
    // bound by the LLC's bandwidth, not DRAM's; searched the same way.
    C = P->metrics.llc_hit_rate.value_or(0) >= 0.5 ? Class::Cache
                                                   : Class::Memory;
  Why = policy::formatNote(
      "classify: %s on %u of %d SMs: %.4g blocks/us, NP %.3f against its "
      "isolated rate (%s), curve gain of the share's second half %.2f -> %s",
      S.name.c_str(), S.sms, N, S.rate, S.np,
      isolatedSourceName(S.isolated_source), Gain, className(C));
  return C;
}

std::vector<double>
CdSearchOnlinePolicy::privateRates(const EpochReport &R) const {
  std::vector<double> Rates;
  for (const EpochSample &S : R.kernels) {
    const policy::KernelProfile *P = profileOf(S.name);
    Rates.push_back(P ? privateRateOf(*P, S, NumSms, Kappa) : 0);
  }
  return Rates;
}

bool CdSearchOnlinePolicy::searchStep(const EpochReport &R,
                                      std::vector<std::string> &Notes) {
  const bool Power = Mode == "power";
  // The paper's 5 % was set empirically, as the loss beyond which a memory
  // kernel's SMs are worth more to it than to the compute kernels on its
  // GPU. Here it is measured: the compute kernels' gain in normalised
  // progress since the partition kept last, split evenly among the memory
  // kernels that gave SMs, against each one's own loss. A probe beyond the
  // threshold whose SMs bought more than they cost is kept. Both are read
  // against the current private rates, so a calibration between the two
  // epochs moves neither.
  const std::vector<double> Private = privateRates(R);
  double Gain = 0;
  int Givers = 0;
  for (std::size_t I = 0; I < Kernels.size(); ++I) {
    const State &K = Kernels[I];
    if (K.klass == Class::Compute && Private[I] > 0) {
      // A compute kernel scales on SMs of its own: its rate alone on the
      // GPU is at most what its curve's shape makes of its rate on the
      // kept SMs (a profile too fast would undervalue what it gains).
      double P = Private[I];
      if (K.kept_rate > 0 && K.kept_sms > 0)
        P = std::min(P, K.kept_rate * policy::perfAtSms(*K.profile, NumSms) /
                            policy::perfAtSms(*K.profile, K.kept_sms));
      Gain += (R.kernels[I].rate - K.kept_rate) / P;
    } else if (!K.done) {
      ++Givers;
    }
  }
  bool Kept = false, Stopped = false, Reclassified = false;
  for (std::size_t I = 0; I < Kernels.size(); ++I) {
    State &K = Kernels[I];
    if (K.done)
      continue;
    const EpochSample &S = R.kernels[I];
    const double Ratio = K.ref > 0 ? S.rate / K.ref : 0;
    const bool Within = Ratio >= 1 - Opts.loss;
    const double Drop = K.kept_rate > 0 ? 1 - S.rate / K.kept_rate : 0;
    // Its loss in normalised progress: the measured drop of its rate times
    // its NP on the partition kept last, which is taken as what the curve's
    // shape gives there without co-runners (rate alone on those SMs over
    // rate alone on the GPU) unless the measured NP is higher. Co-runners
    // only lower NP, so the bound overstates a loss that contention
    // already took, and only stops the search sooner; but no profile error
    // understates it (misprofiled times scale the whole curve, and a
    // profile too fast would make a measured NP too low).
    const double KeptNp =
        std::max(Private[I] > 0 ? K.kept_rate / Private[I] : 0,
                 policy::perfAtSms(*K.profile, K.kept_sms) /
                     policy::perfAtSms(*K.profile, NumSms));
    const double Loss = KeptNp * Drop;
    const double Bought = Givers > 0 ? Gain / Givers : 0;
    // Only a kernel whose rate fell less than its SMs did (past its
    // curve's knee) can pay: one that scales with its SMs buys the compute
    // kernels no more than it loses, whatever its profile says (a profile
    // too fast makes a compute kernel look starved and cheap).
    const bool Saturated = K.kept_rate > 0 && K.kept_sms > 0 &&
                           1 - Drop > (1 + Opts.loss) * S.sms / K.kept_sms;
    const bool Pays = Opts.gain_margin > 0 && Private[I] > 0 && Saturated &&
                      Bought - Loss > Opts.gain_margin;
    const char *Name = S.name.c_str();
    if (!Power) {
      // Sec. 4.2: take two more steps' worth of SMs while the rate stays
      // within the loss of the share's (or paid); the first probe beyond
      // it ends the search at the last one kept.
      if (Within || Pays) {
        Kept = true;
        K.good = K.probe;
        const int Next = K.probe - 2 * Unit;
        K.done = Next < 1;
        Notes.push_back(policy::formatNote(
            "performance: %s on %d SMs: %.3f of its %d-SM rate, %s %.0f%%; "
            "NP lost %.3f, compute NP gained %.3f -> %s",
            Name, K.probe, Ratio, K.share, Within ? "within" : "beyond",
            100 * Opts.loss, Loss, Bought, K.done ? "keep" : "probe fewer"));
        if (!K.done)
          K.probe = Next;
      } else {
        K.done = true;
        Stopped = true;
        Notes.push_back(policy::formatNote(
            "performance: %s on %d SMs: %.3f of its %d-SM rate, beyond "
            "%.0f%%; NP lost %.3f, compute NP gained %.3f -> stop at %d SMs",
            Name, K.probe, Ratio, K.share, 100 * Opts.loss, Loss, Bought,
            K.good));
        K.probe = K.good;
      }
      continue;
    }
    // Power mode, stage 2 (Sec. 4.3): keep the tentative count if within
    // the loss, else add SMs (one of the paper's SMs, scaled) until it is.
    // A kernel whose rate fell with its SMs (no more than the loss above
    // proportion) is not memory-intensive, whatever classified it so: a
    // profile too fast makes a compute kernel look starved on its share.
    // Measured compute now, it would only creep back one step per
    // iteration while the power mode gates SMs it could use; the mode is
    // chosen again (the paper's performance mode beside memory kernels).
    if (!Within && K.probe < K.share &&
        Ratio <= (1 + Opts.loss) * K.probe / K.share) {
      K.klass = Class::Compute;
      K.done = true;
      Reclassified = true;
      Notes.push_back(policy::formatNote(
          "power stage 2: %s on %d SMs: %.3f of its %d-SM rate, as its SMs "
          "fell: compute-intensive",
          Name, K.probe, Ratio, K.share));
      continue;
    }
    if (Within || K.probe >= K.share) {
      K.done = true;
      K.good = K.probe;
      Notes.push_back(policy::formatNote(
          "power stage 2: %s on %d SMs: %.3f of its %d-SM rate -> keep, "
          "gate the rest",
          Name, K.probe, Ratio, K.share));
    } else {
      const int Next = std::min(K.share, K.probe + Unit);
      Notes.push_back(policy::formatNote(
          "power stage 2: %s on %d SMs: %.3f of its %d-SM rate -> %d SMs", Name,
          K.probe, Ratio, K.share, Next));
      K.probe = Next;
    }
  }
  // The epoch measured the partition kept now unless a kernel stopped: it
  // goes back to its last kept count, which this epoch did not measure.
  // The baseline then stays the last partition measured whole; the next
  // step's gain and each loss span the same steps from it.
  if (Kept && !Stopped)
    for (std::size_t I = 0; I < Kernels.size(); ++I) {
      Kernels[I].kept_rate = R.kernels[I].rate;
      Kernels[I].kept_sms = static_cast<int>(R.kernels[I].sms);
    }
  if (Reclassified)
    for (State &K : Kernels) { // the search starts again from the share
      K.good = K.probe = K.kept_sms = K.share;
      K.kept_rate = K.ref;
    }
  return Reclassified;
}

Plan CdSearchOnlinePolicy::planFor(const EpochReport &R,
                                   const std::vector<int> &Sms,
                                   std::vector<std::string> Notes) {
  Plan P;
  P.policy = std::string(name());
  P.mode = Mode;
  P.num_sms = NumSms;
  P.notes = std::move(Notes);
  int Used = 0;
  for (std::size_t I = 0; I < R.kernels.size(); ++I) {
    Kernels[I].target = Sms[I];
    KernelDecision D = keepCtas(R.kernels[I], Sms[I]);
    if (Kernels[I].klass != Class::Unknown)
      D.klass = className(Kernels[I].klass);
    Used += Sms[I];
    P.kernels.push_back(std::move(D));
  }
  P.gated_sms = std::max(0, NumSms - Used);
  policy::layOutContiguously(P);
  if (At == Phase::Done)
    Learned[Set.key] = {Mode, sorted(Kernels, Set)};
  return P;
}

CdSearchOnlinePolicy::NameSet
CdSearchOnlinePolicy::nameSet(const std::vector<std::string> &Names) {
  std::vector<std::string> Base;
  for (const std::string &N : Names)
    Base.emplace_back(baseName(N));
  NameSet S;
  S.order.resize(Base.size());
  std::iota(S.order.begin(), S.order.end(), std::size_t{0});
  std::stable_sort(
      S.order.begin(), S.order.end(),
      [&](std::size_t A, std::size_t B) { return Base[A] < Base[B]; });
  for (std::size_t I : S.order)
    S.key += Base[I] + '\n';
  return S;
}

std::vector<CdSearchOnlinePolicy::State>
CdSearchOnlinePolicy::sorted(const std::vector<State> &From,
                             const NameSet &Set) {
  std::vector<State> To;
  for (std::size_t I : Set.order)
    To.push_back(From[I]);
  return To;
}

std::vector<CdSearchOnlinePolicy::State>
CdSearchOnlinePolicy::unsorted(const std::vector<State> &From,
                               const NameSet &Set) {
  std::vector<State> To(From.size());
  for (std::size_t P = 0; P < Set.order.size(); ++P)
    To[Set.order[P]] = From[P];
  return To;
}

std::optional<Plan> CdSearchOnlinePolicy::backToTargets(const EpochReport &R,
                                                        const char *Why) {
  std::vector<int> Sms;
  bool Moved = false;
  for (std::size_t I = 0; I < Kernels.size(); ++I) {
    if (Kernels[I].target <= 0)
      return std::nullopt; // no plan made for this set yet
    Sms.push_back(Kernels[I].target);
    Moved |= R.kernels[I].sms != static_cast<unsigned>(Sms.back());
  }
  if (!Moved)
    return std::nullopt;
  return planFor(
      R, Sms,
      {policy::formatNote("%s: back to the %s partition", Why, Mode.c_str())});
}

std::optional<Plan>
CdSearchOnlinePolicy::onReplan(std::string_view Trigger, const Plan &Offline,
                               const std::vector<FinishingKernel> &Finishing) {
  (void)Finishing; // the controller defers SMs they still hold
  if (Trigger != "arrival")
    return std::nullopt;
  std::vector<std::string> Names;
  for (const KernelDecision &D : Offline.kernels)
    Names.push_back(D.name);
  const NameSet New = nameSet(Names);
  std::vector<State> From;
  std::string AtMode;
  if (New.key == Set.key) {
    From = sorted(Kernels, Set);
    AtMode = Mode;
  } else if (auto It = Learned.find(New.key); It != Learned.end()) {
    AtMode = It->second.first;
    From = It->second.second;
  } else {
    return std::nullopt; // kernels not searched together yet: even
  }
  const std::vector<State> To = unsorted(From, New);
  Plan P = Offline;
  const int N = Offline.num_sms > 0 ? Offline.num_sms : Profiles.gpu.num_sms;
  int Used = 0;
  for (std::size_t I = 0; I < To.size(); ++I) {
    if (To[I].target <= 0)
      return std::nullopt; // still classifying on the even share
    P.kernels[I].sms = To[I].target;
    if (To[I].klass != Class::Unknown)
      P.kernels[I].klass = className(To[I].klass);
    Used += To[I].target;
  }
  if (Used > N)
    return std::nullopt;
  P.mode = AtMode;
  P.gated_sms = N - Used;
  P.notes.push_back(policy::formatNote(
      "arrival of kernels searched together before: their %s partition",
      AtMode.c_str()));
  policy::layOutContiguously(P);
  return P;
}

std::optional<Plan> CdSearchOnlinePolicy::onEpoch(const EpochReport &R,
                                                  const Plan &Current) {
  const std::size_t K = R.kernels.size();
  NumSms = Current.num_sms > 0 ? Current.num_sms : Profiles.gpu.num_sms;
  if (std::vector<unsigned long long> Now = kernelIds(R); Now != Ids) {
    Ids = std::move(Now);
    std::vector<std::string> Names;
    for (const EpochSample &S : R.kernels)
      Names.push_back(S.name);
    const NameSet New = nameSet(Names);
    const bool Relaunch = New.key == Set.key;
    const auto It = Learned.find(New.key);
    if (Relaunch) {
      // New launches of the kernels being searched (a re-launch, a loop):
      // the same co-run, so classes and search go on.
      Kernels = unsorted(sorted(Kernels, Set), New);
    } else if (It != Learned.end()) {
      // Kernels searched together before: converged at once.
      Kernels = unsorted(It->second.second, New);
      Mode = It->second.first;
      At = Phase::Done;
      Converged = R.index;
    } else {
      // An arrival or a departure: the base policy (even) re-planned, and
      // the paper restarts the classification phase on the new set.
      Kernels.assign(K, State());
      At = Phase::Classify;
      Mode = "classify";
      Converged.reset();
    }
    Set = New;
    Classes.clear();
    for (std::size_t I = 0; I < K; ++I)
      if (Kernels[I].klass != Class::Unknown)
        Classes[R.kernels[I].id] = Kernels[I].klass;
    if (Relaunch || It != Learned.end())
      if (std::optional<Plan> P =
              backToTargets(R, Relaunch ? "new launches of the kernels searched"
                                        : "kernels searched together before"))
        return P;
  }
  for (const EpochSample &S : R.kernels)
    if (const policy::KernelProfile *P = profileOf(S.name))
      calibrateProfile(Kappa, *P, S);
  if (K < 2 || At == Phase::Done)
    return std::nullopt; // converged: the partition holds until the set
                         // changes (hysteresis: no knob changes at all)
  Unit = std::max(1, static_cast<int>(std::lround(NumSms / 24.0)));
  // Decide only on epochs that measured one allocation of every kernel.
  for (const EpochSample &S : R.kernels)
    if (!S.steady || S.preempted || S.sms == 0)
      return std::nullopt;

  std::vector<std::string> Notes;
  std::vector<std::size_t> Memory, Compute;
  int Free = NumSms; // SMs of the classified kernels
  ++Steps;
  bool ChooseMode = At == Phase::Classify;
  if (At == Phase::Search && searchStep(R, Notes)) {
    ChooseMode = true;
    for (std::size_t I = 0; I < K; ++I)
      Classes[R.kernels[I].id] = Kernels[I].klass;
  }
  if (At == Phase::Classify) {
    for (std::size_t I = 0; I < K; ++I) {
      const EpochSample &S = R.kernels[I];
      State &St = Kernels[I];
      std::string Why;
      St.klass = classify(S, NumSms, Why);
      St.profile = profileOf(S.name);
      St.share = static_cast<int>(S.sms);
      St.good = St.probe = St.share;
      St.ref = S.rate;
      St.np = S.np;
      St.kept_rate = S.rate;
      St.kept_sms = static_cast<int>(S.sms);
      Classes[S.id] = St.klass;
      Notes.push_back(Why);
    }
  }
  for (std::size_t I = 0; I < K; ++I) {
    const Class C = Kernels[I].klass;
    if (C == Class::Unknown)
      Free -= static_cast<int>(R.kernels[I].sms);
    else if (C == Class::Compute)
      Compute.push_back(I);
    else
      Memory.push_back(I);
  }

  if (ChooseMode) {
    if (Memory.empty()) {
      // Sec. 3.3: compute-intensive kernels scale linearly, moving SMs is
      // performance-neutral: even partitioning, the classification's.
      Mode = "even";
      At = Phase::Done;
      Converged = R.index;
      Notes.push_back("only compute-intensive kernels: even partitioning");
      std::vector<int> Sms;
      for (const State &St : Kernels)
        Sms.push_back(St.share);
      return planFor(R, Sms, std::move(Notes));
    }
    Mode = Compute.empty() ? "power" : "performance";
    Notes.push_back(
        Compute.empty()
            ? "only memory-intensive kernels: power mode (the tentative "
              "count from the one-SM rate, then one step more at a time "
              "until within the loss; the rest gated)"
            : policy::formatNote("memory + compute: performance mode (%d SMs "
                                 "fewer per step for the memory kernels, to "
                                 "the compute kernels)",
                                 2 * Unit));
    for (std::size_t I : Memory) {
      State &St = Kernels[I];
      St.done = false;
      if (Mode == "power") {
        // Stage 1 without its probe: on one SM a kernel draws next to no
        // off-SM bandwidth, so its rate there is its isolated rate, the
        // profile's. Measured live it would idle all but two SMs for an
        // iteration of two epochs (20 % of a 10 ms co-run, where the
        // paper's 40K cycles are a fraction of a percent). The measured
        // rate on the share over that rate is NP on the share times the
        // curve's perf(share) / perf(1).
        const double Ratio = (St.np > 0 ? St.np : 1.0) *
                             policy::perfAtSms(*St.profile, St.share) /
                             policy::perfAtSms(*St.profile, 1);
        const int Tentative = static_cast<int>(std::ceil(Ratio - 1e-9));
        St.probe = std::clamp(Tentative, 1, St.share);
        Notes.push_back(policy::formatNote(
            "power stage 1: %s: rate on %d SMs / isolated rate on 1 SM = "
            "%.3f -> tentative %d SMs",
            R.kernels[I].name.c_str(), St.share, Ratio, St.probe));
      } else if (St.share - 2 * Unit >= 1) {
        St.probe = St.share - 2 * Unit;
      } else {
        St.done = true;
      }
    }
    At = Phase::Search;
  }

  // The next allocation: searched kernels at their probe (or where they
  // stopped), unknown ones where they are, compute kernels split the rest
  // evenly (performance mode); power mode gates what is left.
  std::vector<int> Sms(K, 0);
  int Left = Free;
  for (std::size_t I : Memory) {
    Sms[I] = Kernels[I].done ? Kernels[I].good : Kernels[I].probe;
    Left -= Sms[I];
  }
  for (std::size_t I = 0; I < K; ++I)
    if (Kernels[I].klass == Class::Unknown)
      Sms[I] = static_cast<int>(R.kernels[I].sms);
  if (!Compute.empty()) {
    const std::vector<int> Rest =
        policy::evenSplit(std::max(0, Left), static_cast<int>(Compute.size()));
    for (std::size_t C = 0; C < Compute.size(); ++C)
      Sms[Compute[C]] = Rest[C];
  }
  if (std::all_of(Memory.begin(), Memory.end(),
                  [&](std::size_t I) { return Kernels[I].done; })) {
    At = Phase::Done;
    Converged = R.index;
    Notes.push_back(policy::formatNote("%s mode converged", Mode.c_str()));
  }
  return planFor(R, Sms, std::move(Notes));
}

} // namespace smpart::online
