// HSM-Fair / HSM-QoS online (hsm_online_policy.hpp; controller README,
// "Online HSM").
#include "hsm_online_policy.hpp"
#include "report_kernels.hpp"

#include "smpart/policy/curves.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace smpart::online {

using policy::KernelDecision;
using policy::Plan;

HsmOnlinePolicy::HsmOnlinePolicy(policy::ProfileSet P, HsmOnlineOptions O)
    : Profiles(std::move(P)), Opts(O), Changes(O.window, O.max_changes) {}

const policy::KernelProfile *
HsmOnlinePolicy::profileOf(const std::string &Name) const {
  return profileWithCurve(Profiles, Name);
}

// HSM's classifier (Eq. 2-3) compares bandwidth demand with potential; the
// profile's SM curve shows the same bottleneck directly: a memory-bound
// kernel stops scaling well before the whole GPU.
bool HsmOnlinePolicy::memoryBound(const policy::KernelProfile &P,
                                  unsigned NumSms) const {
  const double N = static_cast<double>(NumSms);
  return policy::perfAtSms(P, N) < 1.5 * policy::perfAtSms(P, N / 2);
}

double HsmOnlinePolicy::predictNp(const EpochSample &S, unsigned NumSms) const {
  const policy::KernelProfile *P = profileOf(S.name);
  if (!P || S.sms == 0)
    return 0;
  // The isolated speed at S SMs over private mode (all SMs): Eq. 4's
  // S_k / sigma_k where the curve is linear, the curve where it saturates.
  const double Shape = policy::perfAtSms(*P, S.sms) /
                       policy::perfAtSms(*P, static_cast<double>(NumSms));
  // Eq. 4: a compute-bound kernel on its own SMs progresses as its SMs
  // allow; no profile level enters, so wrong isolated times do not either.
  // A rate learned alone at this allocation is exact and wins.
  if (!memoryBound(*P, NumSms) && S.isolated_source != IsolatedSource::Learned)
    return Shape;
  // Eq. 5's B_k / beta_k: the measured rate over the isolated rate at the
  // same allocation (the bandwidth share it gets of what it would use),
  // the isolated rate corrected by the calibration epoch's measurement.
  if (S.np <= 0)
    return Shape;
  auto K = Kappa.find(P->name);
  return S.np * Shape /
         (K != Kappa.end() && S.isolated_source == IsolatedSource::Profile
              ? K->second
              : 1.0);
}

bool HsmOnlinePolicy::allowed(const EpochReport &R,
                              const std::vector<int> &Sms) const {
  if (!Converged)
    return true;
  for (std::size_t I = 0; I < R.kernels.size(); ++I)
    if (static_cast<int>(R.kernels[I].sms) != Sms[I] &&
        !Changes.mayChange(R.kernels[I].id, R.index))
      return false;
  return true;
}

void HsmOnlinePolicy::learnFrom(const EpochSample &S) {
  if (const policy::KernelProfile *P = profileOf(S.name))
    calibrateProfile(Kappa, *P, S);
}

std::optional<std::optional<Plan>>
HsmOnlinePolicy::calibrate(const EpochReport &R, unsigned N) {
  const std::size_t K = R.kernels.size();
  if (Probing) {
    std::size_t I = 0;
    while (I < K && R.kernels[I].id != *Probing)
      ++I;
    if (I == K) { // it finished meanwhile
      Probing.reset();
      return std::nullopt;
    }
    const EpochSample &S = R.kernels[I];
    if (!S.steady || S.sms != N)
      return std::optional<Plan>(); // the SMs are still moving
    const policy::KernelProfile *P = profileOf(S.name);
    // Against the profile, not a rate learned alone earlier: the factor
    // scales the profile (privateRateOf).
    if (S.profile_rate > 0 && S.rate > 0)
      Kappa[P->name] = S.rate / S.profile_rate;
    else // nothing to learn: do not probe again, keep what was learned
      Kappa.try_emplace(P->name, 1.0);
    Probed.insert(P->name);
    Probing.reset();
    // The next memory-bound kernel alone at once: a return to the co-run
    // in between would cost two epochs and measure nothing new.
    if (std::optional<Plan> Next = startProbe(R, N, true))
      return std::optional<Plan>(std::move(Next));
    if (Resume.kernels.size() != K)
      return std::optional<Plan>();
    // Every level measured: decide from the co-run measured before the
    // calibration epochs (same kernels, rates at the resumed allocation),
    // with the progress made since; back to that allocation otherwise.
    if (CoRun && kernelIds(*CoRun) == kernelIds(R)) {
      EpochReport M = *CoRun;
      for (std::size_t J = 0; J < K; ++J) {
        M.kernels[J].done = R.kernels[J].done;
        M.kernels[J].total = R.kernels[J].total;
      }
      M.index = R.index;
      M.start_us = R.start_us;
      M.end_us = R.end_us;
      if (std::optional<Plan> P = decide(M, N, Resume)) // laid out as it
        return std::optional<Plan>(std::move(P));
    }
    return std::optional<Plan>(Resume);
  }
  if (!Opts.probe || K < 2)
    return std::nullopt;
  for (const EpochSample &S : R.kernels)
    if (!S.steady || S.preempted || S.sms == 0)
      return std::nullopt;
  if (std::optional<Plan> Probe = startProbe(R, N, false))
    return std::optional<Plan>(std::move(Probe));
  return std::nullopt;
}

std::optional<Plan> HsmOnlinePolicy::startProbe(const EpochReport &R,
                                                unsigned N, bool Chained) {
  const std::size_t K = R.kernels.size();
  for (std::size_t I = 0; I < K; ++I) {
    const policy::KernelProfile *P = profileOf(R.kernels[I].name);
    if (!P || !memoryBound(*P, N) || Probed.count(P->name) ||
        R.kernels[I].isolated_source == IsolatedSource::Learned)
      continue;
    // Every other kernel preempted for this epoch and the next: the
    // kernel's rate is its private-mode rate (no DRAM co-runner).
    Plan Probe;
    Probe.policy = std::string(name());
    Probe.mode = "calibrate";
    Probe.num_sms = static_cast<int>(N);
    Probe.notes.push_back(policy::formatNote(
        "%s: measuring %s alone for its private-mode rate",
        std::string(name()).c_str(), R.kernels[I].name.c_str()));
    if (!Chained) { // the allocation to return to
      Resume = Probe;
      Resume.mode = "resume";
      Resume.notes.clear();
      Resume.kernels.clear();
    }
    for (std::size_t J = 0; J < K; ++J) {
      KernelDecision D =
          keepCtas(R.kernels[J], static_cast<int>(R.kernels[J].sms));
      if (!Chained)
        Resume.kernels.push_back(D);
      D.sms = J == I ? static_cast<int>(N) : 0;
      Probe.kernels.push_back(D);
    }
    if (!Chained)
      policy::layOutContiguously(Resume);
    Probing = R.kernels[I].id;
    return Probe;
  }
  return std::nullopt;
}

std::optional<Plan> HsmOnlinePolicy::onEpoch(const EpochReport &R,
                                             const Plan &Current) {
  const std::size_t K = R.kernels.size();
  if (std::vector<unsigned long long> Now = kernelIds(R); Now != Ids) {
    // Arrival or departure: the offline policy re-planned; converge anew.
    Ids = std::move(Now);
    Converged.reset();
    Expected.reset();
    AfterShortStep = false;
    QosBracket = {};
    // The event's re-plan ended a calibration epoch early: it measured
    // nothing, and the kernel may be measured in a later one.
    Probing.reset();
    Changes.keepOnly(Ids);
  }
  Arrivals.observe(R);
  if (K < 2 && !Probing)
    return std::nullopt;
  const unsigned N = Current.num_sms > 0
                         ? static_cast<unsigned>(Current.num_sms)
                         : static_cast<unsigned>(Profiles.gpu.num_sms);
  if (!Probing && K >= 2 &&
      std::all_of(R.kernels.begin(), R.kernels.end(), [](const EpochSample &S) {
        return S.steady && !S.preempted && S.sms > 0;
      }))
    CoRun = R;
  if (std::optional<std::optional<Plan>> C = calibrate(R, N))
    return *C;
  for (const EpochSample &S : R.kernels)
    learnFrom(S);
  if (K < 2)
    return std::nullopt;
  return decide(R, N, Current);
}

std::optional<Plan> HsmOnlinePolicy::decide(const EpochReport &R, unsigned N,
                                            const Plan &Current) {
  const std::size_t K = R.kernels.size();
  // Decide only on epochs that measured the current allocation.
  std::vector<double> Np(K, 0);
  std::vector<const policy::KernelProfile *> Prof(K, nullptr);
  int Free = static_cast<int>(N);
  for (std::size_t I = 0; I < K; ++I) {
    const EpochSample &S = R.kernels[I];
    if (!S.steady || S.preempted || S.sms == 0)
      return std::nullopt;
    Prof[I] = profileOf(S.name);
    Np[I] = predictNp(S, N);
    if (!Prof[I]) // unprofiled: keeps the share the controller gave it
      Free -= static_cast<int>(S.sms);
  }
  // Sec. 4.2's linear model through the origin, g = NP / S: for a
  // memory-bound kernel SMs buy memory-level parallelism and so bandwidth
  // share, up to what it would reach alone at that many SMs (the profile
  // curve: saturation); a compute-bound kernel follows its curve.
  std::vector<bool> Memory(K, false);
  for (std::size_t I = 0; I < K; ++I)
    Memory[I] = Prof[I] && memoryBound(*Prof[I], N);
  auto Predict = [&](std::size_t I, int Sms) {
    if (!Prof[I])
      return Np[I];
    const double Curve = Np[I] * policy::perfAtSms(*Prof[I], Sms) /
                         policy::perfAtSms(*Prof[I], R.kernels[I].sms);
    if (!Memory[I])
      return Curve;
    const double Alone = policy::perfAtSms(*Prof[I], Sms) /
                         policy::perfAtSms(*Prof[I], static_cast<double>(N));
    return std::max(Curve, std::min(Alone, Np[I] * Sms / R.kernels[I].sms));
  };
  std::vector<std::size_t> Opt; // the kernels whose SMs move
  for (std::size_t I = 0; I < K; ++I)
    if (Prof[I])
      Opt.push_back(I);
  if (Opt.size() < 2 || Free < static_cast<int>(Opt.size()))
    return std::nullopt;

  std::vector<int> Sms(K);
  for (std::size_t I = 0; I < K; ++I)
    Sms[I] = static_cast<int>(R.kernels[I].sms);
  auto Fairness = [&](const std::vector<int> &A) {
    double Lo = 1e300, Hi = 0;
    for (std::size_t I : Opt) {
      Lo = std::min(Lo, Predict(I, A[I]));
      Hi = std::max(Hi, Predict(I, A[I]));
    }
    return Hi > 0 ? Lo / Hi : 1.0;
  };
  auto Stp = [&](const std::vector<int> &A, std::size_t Skip) {
    double Sum = 0;
    for (std::size_t I : Opt)
      if (I != Skip)
        Sum += Predict(I, A[I]);
    return Sum;
  };
  // Hands \p Pool SMs to \p Who one at a time, each to the kernel the
  // objective wants most: the lowest predicted NP (fair, the paper's
  // max/min step generalised to any number of kernels) or the largest NP
  // gain (the rest of HSM-QoS).
  auto Distribute = [&](std::vector<std::size_t> Who, int Pool, bool MaxMin,
                        std::vector<int> &A) {
    for (std::size_t I : Who)
      A[I] = 1;
    Pool -= static_cast<int>(Who.size());
    for (; Pool > 0; --Pool) {
      std::size_t Pick = Who.front();
      double Best = -1e300;
      for (std::size_t I : Who) {
        const double Gain = Predict(I, A[I] + 1) - Predict(I, A[I]);
        const double Score =
            MaxMin ? (Gain > 1e-12 ? -Predict(I, A[I]) : -1e9) : Gain;
        if (Score > Best) {
          Best = Score;
          Pick = I;
        }
      }
      ++A[Pick];
    }
  };

  // SiM's remaining time (adaptive-multitenancy-sim Sec. 3): blocks left
  // over the rate an allocation is predicted to give. Each kernel's work
  // left and time alone are in units of its private-mode rate, rate / NP;
  // Speed[I][S] is its predicted NP on S SMs (Predict, memoised).
  std::vector<double> WorkLeft(K, 0), Alone(K, 0), Elapsed(K, 0);
  std::vector<std::vector<double>> Speed(K);
  bool Project = Opts.project;
  for (std::size_t I : Opt) {
    if (!Project)
      break;
    const EpochSample &S = R.kernels[I];
    const std::optional<double> At = Arrivals.of(S);
    if (!At || !(S.rate > 0) || !(Np[I] > 0)) {
      Project = false;
      break;
    }
    const double Private = S.rate / Np[I]; // blocks per us alone
    WorkLeft[I] =
        static_cast<double>(S.total - std::min(S.done, S.total)) / Private;
    Alone[I] = static_cast<double>(S.total) / Private;
    Elapsed[I] = R.end_us - *At;
    Speed[I].assign(N + 1, -1); // filled as the search asks
  }
  // Projected final NP of every optimised kernel under \p A: the kernels
  // co-run at their predicted NP until the first finishes, its SMs go to
  // the others in proportion to theirs (as the re-plan at its departure
  // and the next steps would), and the last runs alone.
  std::vector<double> Left(K), Finish(K), Share(K);
  std::vector<std::size_t> Active;
  auto Finals = [&](const std::vector<int> &A, std::vector<double> &F) {
    Active.assign(Opt.begin(), Opt.end());
    for (std::size_t I : Opt) {
      Left[I] = WorkLeft[I];
      Share[I] = A[I];
    }
    double T = 0;
    while (!Active.empty()) {
      auto SpeedOf = [&](std::size_t I) {
        const unsigned X = static_cast<unsigned>(
            std::clamp(std::lround(Share[I]), 1l, static_cast<long>(N)));
        if (Active.size() > 1) {
          if (Speed[I][X] < 0)
            Speed[I][X] = Predict(I, static_cast<int>(X));
          return std::max(1e-6, Speed[I][X]);
        }
        // Alone: no co-runner's contention; its curve at X SMs.
        return policy::perfAtSms(*Prof[I], X) /
               policy::perfAtSms(*Prof[I], static_cast<double>(N));
      };
      std::size_t First = 0;
      double Dt = 1e300;
      for (std::size_t J = 0; J < Active.size(); ++J)
        if (const double D = Left[Active[J]] / SpeedOf(Active[J]); D < Dt) {
          Dt = D;
          First = J;
        }
      for (std::size_t I : Active)
        Left[I] -= SpeedOf(I) * Dt;
      T += Dt;
      const std::size_t Done = Active[First];
      Finish[Done] = T;
      Active.erase(Active.begin() + static_cast<long>(First));
      double Rest = 0;
      for (std::size_t I : Active)
        Rest += Share[I];
      for (std::size_t I : Active)
        Share[I] += Share[Done] * Share[I] / Rest;
    }
    F.assign(K, 0);
    for (std::size_t I : Opt)
      F[I] = Alone[I] / (Elapsed[I] + Finish[I]);
  };
  std::vector<double> Final;
  // HSM-QoS's objective for the others: their projected final NP where
  // the projection is known, else the epoch's predicted NP.
  auto OthersNp = [&](const std::vector<int> &A, std::size_t Skip) {
    if (!Project)
      return Stp(A, Skip);
    Finals(A, Final);
    double Sum = 0;
    for (std::size_t I : Opt)
      if (I != Skip)
        Sum += Final[I];
    return Sum;
  };
  auto FinalFairness = [&](const std::vector<int> &A) {
    Finals(A, Final);
    double Lo = 1e300, Hi = 0;
    for (std::size_t I : Opt) {
      Lo = std::min(Lo, Final[I]);
      Hi = std::max(Hi, Final[I]);
    }
    return Hi > 0 ? Lo / Hi : 1.0;
  };
  // HSM-Fair's max/min step on projected final NP: SMs move from a kernel
  // projected above the lowest to the lowest while min / max improves,
  // in halving steps.
  auto Equalise = [&](std::vector<int> &A) {
    double Best = FinalFairness(A);
    std::vector<int> Try;
    for (int Step : {16, 8, 4, 2, 1})
      for (int Round = 0; Round < 32; ++Round) {
        Finals(A, Final);
        std::size_t Lo = Opt.front();
        for (std::size_t I : Opt)
          if (Final[I] < Final[Lo])
            Lo = I;
        const std::vector<double> Now = Final;
        std::vector<int> Pick;
        double PickF = Best;
        for (std::size_t J : Opt) {
          if (J == Lo || A[J] - Step < 1 || Now[J] <= Now[Lo])
            continue;
          Try = A;
          Try[J] -= Step;
          Try[Lo] += Step;
          if (const double F = FinalFairness(Try); F > PickF + 1e-9) {
            PickF = F;
            Pick = Try;
          }
        }
        if (Pick.empty())
          break;
        A = Pick;
        Best = PickF;
      }
    return Best;
  };

  std::vector<int> Next = Sms;
  std::string Why;
  double Level = 0; // the objective measured now
  auto Settle = [&] {
    AfterShortStep = false; // a later search judges its own first step
    if (!Converged) {
      Converged = R.index;
      Band = Level;
    }
    return std::nullopt;
  };
  std::optional<Step> Expect;
  // The plan for Next (and what the model predicts of it), unless it moves
  // too little to measure or the change budget refuses it.
  auto Emit = [&]() -> std::optional<Plan> {
    int Moved = 0;
    for (std::size_t I = 0; I < K; ++I)
      Moved += std::abs(Next[I] - Sms[I]);
    // Two SMs each way are within the noise of one epoch; a measured step
    // of HSM-QoS is taken anyway (it ends the bisection).
    if (Moved < 4 && !QosBracket.measured)
      return Settle();
    if (!allowed(R, Next))
      return std::nullopt;

    Plan P;
    P.policy = std::string(name());
    P.mode = Opts.qos ? "qos" : "fair";
    P.num_sms = static_cast<int>(N);
    P.notes.push_back(Why);
    for (std::size_t I = 0; I < K; ++I) {
      const EpochSample &S = R.kernels[I];
      KernelDecision D = keepCtas(S, Next[I]);
      if (Prof[I]) {
        D.klass = memoryBound(*Prof[I], N) ? "memory" : "compute";
        D.predicted_np = Predict(I, Next[I]);
        P.notes.push_back(policy::formatNote(
            "%s: NP %.3f on %u SMs -> %.3f on %d", S.name.c_str(), Np[I], S.sms,
            Predict(I, Next[I]), Next[I]));
      }
      if (Next[I] != Sms[I])
        Changes.record(S.id, R.index);
      P.kernels.push_back(std::move(D));
    }
    // Kernels whose count stays keep their SMs where the counts allow.
    policy::layOutInTheOrderOf(P, Current);
    ++Steps;
    Expected = Expect;
    return P;
  };
  // A step measured worse than the allocation before it, beyond the
  // noise: that allocation comes back, and the search ends on it.
  // The search it ends is not bound by the change budget (that binds the
  // steps of a search started once converged): converged after it.
  auto Undo = [&](const std::vector<int> &From, double Before, double Now) {
    Next = From;
    Why = policy::formatNote(
        "%s: the last step measured %.3f, below %.3f before it: undone",
        std::string(name()).c_str(), Now, Before);
    AfterShortStep = false;
    std::optional<Plan> P = Emit();
    if (!Converged) {
      Converged = R.index;
      Band = Before;
    }
    return P;
  };
  std::optional<std::size_t> High;
  if (Opts.qos)
    for (std::size_t I : Opt)
      if (Prof[I]->priority == policy::Priority::High) {
        High = I;
        break;
      }
  if (High) {
    const std::size_t H = *High;
    const double Goal = Prof[H]->np_target.value_or(Opts.qos_target);
    // The target is on the kernel's NP over its whole run: after epochs
    // below it the rest must run above it, after epochs above it (alone
    // before its co-runners came) the rest may run below it. SiM's
    // remaining time: blocks left at the private rate, against the time
    // left within the goal.
    double Target = Goal;
    const EpochSample &Hp = R.kernels[H];
    if (const std::optional<double> At = Arrivals.of(Hp);
        At && Hp.rate > 0 && Np[H] > 0 && Hp.done < Hp.total) {
      const double Private = Hp.rate / Np[H];
      const double Left = static_cast<double>(Hp.total - Hp.done) / Private;
      const double Within =
          static_cast<double>(Hp.total) / Private / Goal - (R.end_us - *At);
      Target = Within > 0 ? std::clamp(Left / Within, 0.05, 1.0) : 1.0;
    }
    auto Aim = [&] {
      return std::abs(Target - Goal) < 0.005
                 ? policy::formatNote("target %.2f", Goal)
                 : policy::formatNote(
                       "target %.2f (%.2f for the rest of its run)", Goal,
                       Target);
    };
    Level = Np[H];
    const bool Short = Np[H] < Target;
    const bool Over = Np[H] > Target + Opts.qos_slack;
    Bracket &B = QosBracket;
    if (Expected) {
      const auto [Before, Predicted, From] = *Expected;
      Expected.reset();
      if (Level < Before + 0.5 * (Predicted - Before)) {
        // The model cannot see further. Met anyway: done. Short: the
        // paper's check repeats every epoch, so the SMs go on moving, by
        // measurement now.
        if (!Short)
          return Settle();
        B.measured = true;
      }
    }
    if (Converged && Level >= std::min(Band, Target) - Opts.min_gain)
      return std::nullopt;
    // The newest measurement wins: the target moves from epoch to epoch,
    // so an older end of the bracket may no longer hold. (So met_at is 0
    // or above short_at.)
    if (Short) {
      B.short_at = Sms[H];
      if (B.met_at <= Sms[H])
        B.met_at = 0;
    } else {
      if (B.met_at == 0 || Sms[H] < B.met_at)
        B.met_at = Sms[H];
      if (B.short_at >= Sms[H])
        B.short_at = 0;
    }
    std::vector<std::size_t> Low;
    for (std::size_t I : Opt)
      if (I != H)
        Low.push_back(I);
    const int Max = Free - static_cast<int>(Low.size());
    int Hs = Sms[H];
    if (B.measured) {
      // Bisect between the most SMs measured short and the fewest measured
      // at target (with none at target yet: all the others hold but one
      // SM each), each step measured before the next.
      const int Top = B.met_at ? B.met_at : Max;
      if (Short || Over)
        Hs = Top - B.short_at > 4 ? (B.short_at + Top + 1) / 2 : Top;
      Hs = std::clamp(Hs, 1, Max);
      if (Hs == Sms[H])
        return Settle(); // met, or short with every SM it can have
      Next[H] = Hs;
      Distribute(Low, Free - Hs, false, Next);
      Why = policy::formatNote(
          "%s: %s NP %.3f %s %s on %d SMs, beyond the model: measured step "
          "to %d SMs (short at %d, met at %d)",
          std::string(name()).c_str(), R.kernels[H].name.c_str(), Np[H],
          Short  ? "below"
          : Over ? "above"
                 : "at",
          Aim().c_str(), Sms[H], Hs, B.short_at, B.met_at);
    } else {
      if (Short || Over) {
        // The fewest SMs predicted to reach the target, marginally above.
        Hs = Max;
        for (int S = 1; S <= Max; ++S)
          if (Predict(H, S) >= Target * (1 + Opts.min_gain)) {
            Hs = S;
            break;
          }
      }
      Next[H] = Hs;
      Distribute(Low, Free - Hs, false, Next);
      const bool StpGain =
          OthersNp(Next, H) > OthersNp(Sms, H) * (1 + Opts.min_gain) && !Short;
      if (!Short && !Over && !StpGain)
        return Settle();
      if (Short)
        Expect = Step{Np[H], Predict(H, Hs), Sms};
      Why = policy::formatNote("%s: %s NP %.3f %s %s; %d SMs for it",
                               std::string(name()).c_str(),
                               R.kernels[H].name.c_str(), Np[H],
                               Short  ? "below"
                               : Over ? "above"
                                      : "at",
                               Aim().c_str(), Hs);
    }
  } else if (Opts.qos) {
    // No high-priority kernel runs (it left, or none arrived): every SM is
    // "the remaining resources", given for the largest predicted sum of NP.
    const double Now = Stp(Sms, K);
    Level = Now;
    if (Expected) {
      const auto [Before, Predicted, From] = *Expected;
      Expected.reset();
      if (Now < Before * (1 - Opts.min_gain))
        return Undo(From, Before, Now);
      if (Now < Before + 0.5 * (Predicted - Before))
        return Settle();
    }
    if (Converged && Now >= Band * (1 - Opts.min_gain))
      return std::nullopt;
    Distribute(Opt, Free, false, Next);
    const double Predicted = Stp(Next, K);
    if (Predicted < Now * (1 + Opts.min_gain))
      return Settle();
    Expect = Step{Now, Predicted, Sms};
    Why = policy::formatNote(
        "%s: no high-priority kernel: predicted STP %.3f -> %.3f",
        std::string(name()).c_str(), Now, Predicted);
  } else {
    const double Now = Project ? FinalFairness(Sms) : Fairness(Sms);
    Level = Now;
    if (Expected) {
      const auto [Before, Predicted, From] = *Expected;
      Expected.reset();
      const bool Lost = Now < Before - Opts.min_gain; // beyond the noise
      if (Lost)
        return Undo(From, Before, Now);
      if (std::exchange(AfterShortStep, false))
        return Settle(); // the step planned after a short one ends it
      if (Now < Before + 0.5 * (Predicted - Before)) {
        // Short of half the gain the step promised, having lost nothing
        // beyond the noise: the model misjudged how far to go (its linear
        // bandwidth model where DRAM is shared max-min fair), not the
        // direction: it plans once more from the new measurement, and
        // that step ends the search, so a kernel set still converges
        // within 10 epochs (README, "Online HSM").
        AfterShortStep = true;
      }
    }
    if (Converged && Now >= Band - Opts.min_gain)
      return std::nullopt;
    if (Now >= Opts.fair_threshold) {
      return Settle();
    }
    double Predicted = 0;
    if (Project) {
      Predicted = Equalise(Next);
    } else {
      Distribute(Opt, Free, true, Next);
      Predicted = Fairness(Next);
    }
    if (Predicted < Now + Opts.min_gain) {
      return Settle();
    }
    Expect = Step{Now, Predicted, Sms};
    Why = policy::formatNote("%s: %s fairness %.3f below %.2f, predicted %.3f",
                             std::string(name()).c_str(),
                             Project ? "projected final" : "epoch", Now,
                             Opts.fair_threshold, Predicted);
  }
  return Emit();
}

} // namespace smpart::online
