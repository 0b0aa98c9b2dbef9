// Dynamic TLP modulation and bypass learning (tlp_dynamic_policy.hpp;
// controller README, "TLP dynamic").
#include "tlp_dynamic_policy.hpp"
#include "report_kernels.hpp"

#include "smpart/policy/curves.hpp"

#include <algorithm>
#include <cmath>

namespace smpart::online {

using policy::KernelDecision;
using policy::Plan;

const char *tlpPhaseName(TlpDynamicPolicy::Phase P) {
  switch (P) {
  case TlpDynamicPolicy::Phase::Start:
    return "start";
  case TlpDynamicPolicy::Phase::Tlp:
    return "tlp";
  case TlpDynamicPolicy::Phase::Bypass:
    return "bypass";
  case TlpDynamicPolicy::Phase::Converged:
    break;
  }
  return "converged";
}

TlpDynamicPolicy::TlpDynamicPolicy(policy::ProfileSet P, TlpDynamicOptions O)
    : Profiles(std::move(P)), Opts(O), Changes(O.window, O.max_changes) {}

const policy::KernelProfile *
TlpDynamicPolicy::profileOf(const std::string &Name) const {
  return profileWithCurve(Profiles, Name);
}

void TlpDynamicPolicy::learn(const EpochSample &S) {
  if (!(S.rate > 0))
    return;
  // Unprofiled: the fastest it was seen to run stands in for its private
  // rate.
  double &Best = BestRate[S.id];
  Best = std::max(Best, S.rate);
  if (const policy::KernelProfile *P = profileOf(S.name))
    calibrateProfile(Kappa, *P, S);
}

double TlpDynamicPolicy::privateRate(const EpochSample &S) const {
  if (const policy::KernelProfile *P = profileOf(S.name)) {
    if (const double Rate =
            privateRateOf(*P, S, static_cast<double>(NumSms), Kappa);
        Rate > 0)
      return Rate;
  }
  auto B = BestRate.find(S.id);
  return B != BestRate.end() ? B->second : 0;
}

double TlpDynamicPolicy::memShare(const EpochSample &S) const {
  const policy::KernelProfile *P = profileOf(S.name);
  const double M = P && P->metrics.bw_util ? *P->metrics.bw_util : 0.5;
  return std::clamp(M, 0.02, 0.98);
}

unsigned TlpDynamicPolicy::occupancyOf(const EpochSample &S) const {
  const policy::KernelProfile *P = profileOf(S.name);
  int Occ = P ? policy::defaultCtasPerSm(Profiles.gpu, *P) : 0;
  if (Occ <= 0 && P && !P->by_ctas.empty())
    Occ = P->by_ctas.back().ctas;
  return Occ > 0 ? static_cast<unsigned>(Occ) : std::max(1u, S.ctas_per_sm);
}

bool TlpDynamicPolicy::fits(const EpochReport &R,
                            const std::vector<Knobs> &K) const {
  // Eq. 1 for every per-SM resource the GPU spec gives.
  policy::SmLoad Load;
  for (std::size_t I = 0; I < K.size(); ++I) {
    const policy::KernelProfile *P = profileOf(R.kernels[I].name);
    if (P && P->block)
      Load.add(*P->block, K[I].ctas);
    if (K[I].ctas > occupancyOf(R.kernels[I]))
      return false;
  }
  return policy::fitsSm(Profiles.gpu, Load);
}

double TlpDynamicPolicy::projectedStp(const EpochReport &R) const {
  // The STP the co-run reaches if every kernel keeps its measured rate
  // until one finishes, whose share of the progress then goes to the
  // others, and the last one runs alone at its private rate: the
  // measurable form of the paper's "fewer stall cycles".
  const std::size_t K = R.kernels.size();
  std::vector<double> Rem(K), Rate(K), Private(K), Finish(K, 0);
  for (std::size_t I = 0; I < K; ++I) {
    const EpochSample &S = R.kernels[I];
    Rem[I] = static_cast<double>(S.total > S.done ? S.total - S.done : 0);
    Rate[I] = S.rate;
    Private[I] = privateRate(S);
    if (!(Rate[I] > 0) || !(Private[I] > 0))
      return 0;
  }
  std::vector<std::size_t> Left(K);
  for (std::size_t I = 0; I < K; ++I)
    Left[I] = I;
  double T = 0;
  while (Left.size() > 1) {
    auto Next = std::min_element(Left.begin(), Left.end(),
                                 [&](std::size_t A, std::size_t B) {
                                   return Rem[A] / Rate[A] < Rem[B] / Rate[B];
                                 });
    const std::size_t J = *Next;
    const double Dt = Rem[J] / Rate[J];
    T += Dt;
    for (std::size_t I : Left)
      Rem[I] = std::max(0.0, Rem[I] - Rate[I] * Dt);
    Finish[J] = T;
    Left.erase(Next);
    // The offline plan gives the rest the finished kernel's CTAs: its
    // normalised progress goes to them in proportion to theirs, none
    // faster than alone.
    double Sum = 0;
    for (std::size_t I : Left)
      Sum += Rate[I] / Private[I];
    const double Scale = (Sum + Rate[J] / Private[J]) / Sum;
    for (std::size_t I : Left)
      Rate[I] = std::max(Rate[I], std::min(Rate[I] * Scale, Private[I]));
  }
  const std::size_t L = Left.front();
  Finish[L] = T + Rem[L] / std::max(Rate[L], Private[L]);
  double Stp = 0;
  for (std::size_t I = 0; I < K; ++I) {
    const EpochSample &S = R.kernels[I];
    auto A = Arrived.find(S.id);
    const double Since = A != Arrived.end() ? R.end_us - A->second : 0;
    const double Alone = static_cast<double>(S.total) / Private[I];
    // NP may exceed 1: fewer CTAs than the occupancy can run faster.
    Stp += Alone / std::max(1.0, Since + Finish[I]);
  }
  return Stp;
}

std::optional<std::vector<TlpDynamicPolicy::Knobs>>
TlpDynamicPolicy::tlpStep(const EpochReport &R, bool CriticalSp) {
  // PUHP (Eq. 4) ranks the kernels by the pipeline they prefer: grow the
  // one that prefers the critical pipeline, take CTAs from the one that
  // prefers the other until Eq. 1 holds.
  const std::size_t K = R.kernels.size();
  std::vector<std::size_t> Order;
  for (std::size_t I = 0; I < K; ++I)
    if (profileOf(R.kernels[I].name))
      Order.push_back(I);
  if (Order.size() < 2)
    return std::nullopt;
  auto Puhp = [&](std::size_t I) {
    const double M = memShare(R.kernels[I]);
    return (1 - M) / M;
  };
  std::stable_sort(Order.begin(), Order.end(),
                   [&](std::size_t A, std::size_t B) {
                     return CriticalSp ? Puhp(A) > Puhp(B) : Puhp(A) < Puhp(B);
                   });
  // The kernel that grows prefers the critical pipeline more than every
  // kernel that shrinks (else the step would serve the other pipeline).
  for (std::size_t Pos = 0; Pos + 1 < Order.size(); ++Pos) {
    const std::size_t G = Order[Pos];
    std::vector<Knobs> Next = L.His;
    if (Next[G].ctas >= occupancyOf(R.kernels[G]))
      continue;
    ++Next[G].ctas;
    // Shrink from the far end of the preference order.
    for (std::size_t S = Order.size() - 1; S > Pos && !fits(R, Next);) {
      Knobs &X = Next[Order[S]];
      if (X.ctas <= 1) {
        --S;
        continue;
      }
      --X.ctas;
      X.bypass = std::min(X.bypass, X.ctas);
    }
    if (fits(R, Next))
      return Next;
  }
  return std::nullopt;
}

std::optional<std::vector<TlpDynamicPolicy::Knobs>>
TlpDynamicPolicy::bypassStep(const EpochReport &R) {
  auto Unit = [](unsigned Tb) { return std::max(1u, (Tb + 3) / 4); };
  if (L.Bypasser) { // Step 4: one more unit while it helps
    const std::size_t B = *L.Bypasser;
    if (L.His[B].bypass >= L.His[B].ctas)
      return std::nullopt;
    std::vector<Knobs> Next = L.His;
    Next[B].bypass =
        std::min(Next[B].ctas, Next[B].bypass + Unit(Next[B].ctas));
    return Next;
  }
  // Steps 2-3: one bypassing CTA per SM for each kernel in turn, the
  // others caching.
  for (; L.NextCandidate < R.kernels.size(); ++L.NextCandidate) {
    const std::size_t C = L.NextCandidate;
    if (!profileOf(R.kernels[C].name) || L.His[C].ctas == 0)
      continue;
    std::vector<Knobs> Next = L.His;
    for (Knobs &X : Next)
      X.bypass = 0;
    Next[C].bypass = 1;
    ++L.NextCandidate;
    return Next;
  }
  return std::nullopt;
}

bool TlpDynamicPolicy::usable(const EpochReport &R) const {
  double Period = 0;
  bool Steady = true;
  for (const EpochSample &S : R.kernels) {
    if (S.preempted || S.sms == 0 || !(S.rate > 0))
      return false;
    Steady = Steady && S.steady;
    Period = std::max(Period, S.sampling_period_us);
  }
  const double Epoch = R.end_us - R.start_us;
  if (!WrittenAt)
    return Steady;
  // At most one step per sampling period (Sec. 4.3, Step 2), counted in
  // whole epochs.
  const unsigned long long Periods =
      Epoch > 0 ? static_cast<unsigned long long>(std::ceil(Period / Epoch))
                : 1;
  if (R.index < *WrittenAt + std::max(1ull, Periods))
    return false;
  // The epoch right after a CTA/bypass step measures the step when the old
  // CTAs drained within a small part of it (one sampling period).
  return Steady ||
         (R.index == *WrittenAt + 1 && Period <= Opts.transition_share * Epoch);
}

bool TlpDynamicPolicy::allowed(const EpochReport &R,
                               const std::vector<Knobs> &K) const {
  if (!Converged)
    return true;
  for (std::size_t I = 0; I < K.size(); ++I) {
    const EpochSample &S = R.kernels[I];
    if ((K[I].ctas != S.ctas_per_sm || K[I].bypass != S.bypass_ctas_per_sm) &&
        !Changes.mayChange(S.id, R.index))
      return false;
  }
  return true;
}

void TlpDynamicPolicy::reset(const EpochReport &R) {
  std::vector<std::string> Now;
  bool Again = false;
  for (const EpochSample &S : R.kernels) {
    Now.emplace_back(baseName(S.name));
    Again = Again ||
            (!Arrived.count(S.id) &&
             std::find(Names.begin(), Names.end(), Now.back()) != Names.end());
  }
  Names = Now;
  std::sort(Now.begin(), Now.end());
  if (Again)
    Recurring.insert(Now);
  Recurs = Recurring.count(Now) > 0;
  Ids.clear();
  for (const EpochSample &S : R.kernels) {
    Ids.push_back(S.id);
    Arrived.try_emplace(S.id, R.start_us);
  }
  L = Learning{};
  Converged.reset();
  WrittenAt.reset();
  // A kernel that left the report took its last block: forget it.
  Changes.keepOnly(Ids);
  auto Gone = [&](unsigned long long Id) {
    return std::find(Ids.begin(), Ids.end(), Id) == Ids.end();
  };
  for (auto It = Arrived.begin(); It != Arrived.end();)
    It = Gone(It->first) ? Arrived.erase(It) : std::next(It);
  for (auto It = BestRate.begin(); It != BestRate.end();)
    It = Gone(It->first) ? BestRate.erase(It) : std::next(It);
}

std::optional<Plan> TlpDynamicPolicy::emit(const EpochReport &R,
                                           const Plan &Current,
                                           const std::vector<Knobs> &K,
                                           std::vector<std::string> Notes) {
  bool Changed = false;
  for (std::size_t I = 0; I < K.size(); ++I)
    Changed = Changed || K[I].ctas != R.kernels[I].ctas_per_sm ||
              K[I].bypass != R.kernels[I].bypass_ctas_per_sm;
  if (!Changed)
    return std::nullopt;
  Plan P;
  P.policy = std::string(name());
  P.mode = tlpPhaseName(L.State);
  P.num_sms = static_cast<int>(NumSms);
  P.notes = std::move(Notes);
  for (std::size_t I = 0; I < K.size(); ++I) {
    const EpochSample &S = R.kernels[I];
    KernelDecision D;
    D.name = S.name;
    D.sms = static_cast<int>(S.sms);
    D.klass = "tlp-dynamic";
    for (const KernelDecision &C : Current.kernels)
      if (C.name == S.name) {
        D.sm_first = C.sm_first;
        D.klass = C.klass;
        break;
      }
    if (D.sm_first + D.sms > static_cast<int>(NumSms))
      D.sm_first = 0;
    D.ctas_per_sm = static_cast<int>(K[I].ctas);
    D.bypass_ctas_per_sm = static_cast<int>(K[I].bypass);
    if (K[I].ctas != S.ctas_per_sm || K[I].bypass != S.bypass_ctas_per_sm)
      Changes.record(S.id, R.index);
    P.kernels.push_back(std::move(D));
  }
  WrittenAt = R.index;
  ++Steps;
  return P;
}

namespace {
std::string describe(const EpochReport &R, const std::vector<unsigned> &C,
                     const std::vector<unsigned> &B) {
  std::string S;
  for (std::size_t I = 0; I < R.kernels.size(); ++I)
    S += policy::formatNote("%s%s %uc+%ub", I ? ", " : "",
                            R.kernels[I].name.c_str(), C[I], B[I]);
  return S;
}
} // namespace

std::optional<Plan> TlpDynamicPolicy::onEpoch(const EpochReport &R,
                                              const Plan &Current) {
  const std::size_t K = R.kernels.size();
  if (kernelIds(R) != Ids)
    // Arrival or departure: the offline policy gave Alg. 1's static plan.
    reset(R);
  NumSms = Current.num_sms > 0 ? static_cast<unsigned>(Current.num_sms)
                               : static_cast<unsigned>(Profiles.gpu.num_sms);
  for (const EpochSample &S : R.kernels)
    learn(S);
  if (K < 2 || !usable(R))
    return std::nullopt;
  const Learning Before = L;

  // The measured pipeline utilisation (README): each kernel's normalised
  // progress split by its compute and memory shares.
  double Sp = 0, Ldst = 0, SpAlone = 0, LdstAlone = 0;
  std::vector<Knobs> Measured(K);
  for (std::size_t I = 0; I < K; ++I) {
    const EpochSample &S = R.kernels[I];
    const double Np = S.rate / privateRate(S);
    const double M = memShare(S);
    Sp += Np * (1 - M);
    Ldst += Np * M;
    SpAlone += 1 - M;
    LdstAlone += M;
    Measured[I] = {S.ctas_per_sm, S.bypass_ctas_per_sm};
  }
  const double J = Recurs ? Sp + Ldst : projectedStp(R);
  if (!(J > 0))
    return std::nullopt;
  auto Name = [&](std::size_t I) { return R.kernels[I].name.c_str(); };
  auto Ctas = [](const std::vector<Knobs> &X) {
    std::vector<unsigned> C;
    for (const Knobs &Y : X)
      C.push_back(Y.ctas);
    return C;
  };
  auto Byp = [](const std::vector<Knobs> &X) {
    std::vector<unsigned> B;
    for (const Knobs &Y : X)
      B.push_back(Y.bypass);
    return B;
  };
  std::vector<std::string> Notes;
  auto Keep = [&](const std::vector<Knobs> &X, double Jx) {
    L.His = X;
    L.HisJ = Jx;
    L.HisSp = Sp;
    L.HisLdst = Ldst;
  };

  if (L.State == Phase::Converged) {
    // Hysteresis: only a lasting drop (a phase change) starts over.
    if (Measured != L.His || J >= L.HisJ * (1 - Opts.relearn_drop)) {
      L.Drops = 0;
      return std::nullopt;
    }
    if (++L.Drops < 2)
      return std::nullopt;
    L.Drops = 0;
    Notes.push_back(policy::formatNote(
        "tlp-dynamic: throughput %.3f fell below %.3f; learning again", J,
        L.HisJ));
    L.State = Phase::Start;
    L.TlpSteps = 0;
    L.TriedOther = false;
    L.NextCandidate = 0;
    L.BestCand.reset();
    L.Bypasser.reset();
  }

  bool Improved = false;
  if (L.State == Phase::Start) {
    // Step 1 of both algorithms: the static plan's sampling period.
    Keep(Measured, J);
    L.State = Phase::Tlp;
    // No trend yet: the critical pipeline is the one furthest below what
    // the kernels drive alone.
    L.DirSp = Sp / SpAlone <= Ldst / LdstAlone;
    Notes.push_back(policy::formatNote(
        "tlp-dynamic: static start (%s): projected STP %.3f, SP %.3f "
        "LDST %.3f",
        describe(R, Ctas(Measured), Byp(Measured)).c_str(), J, Sp, Ldst));
  } else if (L.Trial) {
    // Step 3: compare this sampling period with the history.
    Improved = J > L.HisJ * (1 + Opts.min_gain);
    const double PuctSp = L.HisSp > 0 ? Sp / L.HisSp : 1;
    const double PuctLdst = L.HisLdst > 0 ? Ldst / L.HisLdst : 1;
    if (L.TrialMove == Move::Grow) {
      Notes.push_back(policy::formatNote(
          "tlp-dynamic: tlp step (%s): projected STP %.3f -> %.3f, "
          "PUCT SP %.3f LDST %.3f: %s",
          describe(R, Ctas(Measured), Byp(Measured)).c_str(), L.HisJ, J, PuctSp,
          PuctLdst, Improved ? "kept" : "backed off"));
      if (Improved) {
        Keep(Measured, J);
        L.TriedOther = true; // a direction that works: no need of the other
        // Both pipelines busier: no update of the direction (the paper's
        // rule); otherwise the critical pipeline is the one with the
        // smaller PUCT. Where the paper would now step back towards it,
        // undoing the step just kept, a co-run that ends stops there: the
        // steps are judged by a projection, and a flip says the balance
        // of the two pipelines is reached. A kernel set that comes back
        // is judged by the throughput measured now, so it climbs on while
        // a step in the same direction pays (each is backed off if not):
        // cache-sensitive + streaming reaches kmeans 4, stream_triad 4
        // CTAs per SM, the best sharing configuration, one step past the
        // flip.
        const bool Crit = PuctSp <= PuctLdst;
        if (!Recurs && !(PuctSp > 1 && PuctLdst > 1) && Crit != L.DirSp)
          L.State = Phase::Bypass;
      } else if (!L.TriedOther) {
        L.TriedOther = true;
        L.DirSp = !L.DirSp;
      } else {
        L.State = Phase::Bypass;
      }
    } else if (L.TrialMove == Move::Bypass) {
      if (!L.Bypasser) {
        // Steps 2-3: remember the kernel whose bypassing did best.
        const std::size_t C = L.NextCandidate - 1;
        Notes.push_back(policy::formatNote(
            "tlp-dynamic: bypass trial %s %u CTAs/SM: projected STP %.3f "
            "(none: %.3f)",
            Name(C), Measured[C].bypass, J, L.HisJ));
        if (!L.BestCand || J > L.BestCandJ) {
          L.BestCand = C;
          L.BestCandJ = J;
          L.BestTrial = Measured;
        }
      } else {
        Notes.push_back(policy::formatNote(
            "tlp-dynamic: bypass step 4 %s %u CTAs/SM: projected STP %.3f -> "
            "%.3f: %s",
            Name(*L.Bypasser), Measured[*L.Bypasser].bypass, L.HisJ, J,
            Improved ? "kept" : "backed off one step"));
        if (Improved)
          Keep(Measured, J);
        else
          L.State = Phase::Converged;
      }
    }
    L.Trial.reset();
    L.TrialMove = Move::None;
  } else {
    return std::nullopt; // a sample of the kept configuration: no news
  }

  // A trial costs an epoch and pays off only while the kernel set lasts:
  // none when the first kernel is projected to finish within
  // min_horizon_epochs (a short co-run keeps Alg. 1's plan).
  double Horizon = 1e300;
  for (const EpochSample &S : R.kernels)
    Horizon = std::min(
        Horizon,
        static_cast<double>(S.total - std::min(S.done, S.total)) / S.rate);
  if (L.State != Phase::Converged &&
      Horizon < Opts.min_horizon_epochs * (R.end_us - R.start_us)) {
    Notes.push_back(policy::formatNote(
        "tlp-dynamic: the first kernel ends in %.1f ms: no more trials",
        Horizon / 1000));
    L.State = Phase::Converged;
    // Step 3 needs no further trial: the best bypass measured is kept.
    if (L.BestCand && L.BestCandJ > L.HisJ * (1 + Opts.min_gain)) {
      L.His = L.BestTrial;
      L.HisJ = L.BestCandJ;
    }
  }

  // The next step.
  std::optional<std::vector<Knobs>> Next;
  if (L.State == Phase::Tlp) {
    if (L.TlpSteps < Opts.max_tlp_steps) {
      Next = tlpStep(R, L.DirSp);
      if (!Next && !L.TriedOther) {
        L.TriedOther = true;
        L.DirSp = !L.DirSp;
        Next = tlpStep(R, L.DirSp);
      }
    }
    if (Next) {
      ++L.TlpSteps;
      L.TrialMove = Move::Grow;
      Notes.push_back(
          policy::formatNote("tlp-dynamic: critical pipeline %s; trying %s",
                             L.DirSp ? "SP" : "LDST",
                             describe(R, Ctas(*Next), Byp(*Next)).c_str()));
    } else {
      L.State = Phase::Bypass;
    }
  }
  if (L.State == Phase::Bypass && !Opts.bypass_learning)
    L.State = Phase::Converged;
  if (L.State == Phase::Bypass) {
    Next = bypassStep(R);
    if (!Next && !L.Bypasser && L.BestCand) {
      // Step 3: the kernel whose bypassing left the least stall, if it
      // beats bypassing none.
      const std::size_t C = *L.BestCand;
      L.BestCand.reset();
      if (L.BestCandJ > L.HisJ * (1 + Opts.min_gain)) {
        L.Bypasser = C;
        L.His = L.BestTrial;
        L.HisJ = L.BestCandJ;
        Notes.push_back(policy::formatNote(
            "tlp-dynamic: bypass step 3: %s bypasses (projected STP %.3f)",
            Name(C), L.HisJ));
        Next = bypassStep(R);
        if (!Next)
          L.State = Phase::Converged;
      } else {
        Notes.push_back("tlp-dynamic: bypass step 3: no bypassing beats none");
        L.State = Phase::Converged;
      }
    } else if (!Next) {
      L.State = Phase::Converged;
    }
    if (Next && L.State == Phase::Bypass) {
      L.TrialMove = Move::Bypass;
      Notes.push_back(
          policy::formatNote("tlp-dynamic: bypass %s: trying %s",
                             L.Bypasser ? "step 4" : "steps 2-3",
                             describe(R, Ctas(*Next), Byp(*Next)).c_str()));
    }
  }
  // Hysteresis binds steps taken once converged (learning again), not the
  // back-off that ends the learning.
  const bool Bound = Converged.has_value();
  if (L.State == Phase::Converged) {
    if (!Converged)
      Converged = R.index;
    Notes.push_back(policy::formatNote(
        "tlp-dynamic: converged on %s, projected STP %.3f",
        describe(R, Ctas(L.His), Byp(L.His)).c_str(), L.HisJ));
    Next = L.His; // backs off the last trial, if it was not kept
  }
  if (!Next)
    return std::nullopt;
  if (Bound && !allowed(R, *Next)) {
    // Learning again, a kernel spent its changes: the step waits for the
    // budget, and the next usable period measures and decides again.
    L = Before;
    return std::nullopt;
  }
  if (L.State != Phase::Converged)
    L.Trial = *Next;
  return emit(R, Current, *Next, std::move(Notes));
}

} // namespace smpart::online
