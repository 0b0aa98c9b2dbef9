// Opaque partitions in the controller's plan (README "Opaque partitions").
//
// A partition is a tenant of work smpart cannot rewrite, confined by the
// runtime to a green context. It cannot be preempted or resized while its
// work runs, so the plan gives it a target size for its next launch and
// the runtime reports, at that launch boundary, the real SM ids the driver
// gave it (holdOpaque). Rewritten kernels are planned over the SMs no
// partition holds, so the two kinds never share an SM; an SM a rewritten
// kernel leaves goes to the partition only once the kernel acknowledged.
#include "smpart/controller.hpp"

#include "smpart/policy/curves.hpp"
#include "smpart/trace.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace smpart {

using policy::KernelDecision;
using policy::KernelProfile;
using policy::Plan;
using policy::ProfileSet;

namespace {

/// Splits \p Total in proportion to \p Weights by largest remainder; ties
/// go to the earlier part, so equal weights give evenSplit's shares.
std::vector<int> weightedSplit(int Total, const std::vector<double> &Weights) {
  std::vector<int> Out(Weights.size(), 0);
  const double Sum = std::accumulate(Weights.begin(), Weights.end(), 0.0);
  if (Total <= 0 || !(Sum > 0))
    return Out;
  std::vector<std::pair<double, std::size_t>> Rest;
  int Given = 0;
  for (std::size_t I = 0; I < Weights.size(); ++I) {
    const double Exact = Total * Weights[I] / Sum;
    Out[I] = static_cast<int>(std::floor(Exact));
    Given += Out[I];
    Rest.push_back({Exact - Out[I], I});
  }
  std::stable_sort(Rest.begin(), Rest.end(), [](const auto &A, const auto &B) {
    return A.first > B.first;
  });
  for (std::size_t K = 0; Given < Total && K < Rest.size(); ++K, ++Given)
    ++Out[Rest[K].second];
  return Out;
}

/// The policy's decisions give pairwise disjoint SM ranges (it partitions
/// SMs rather than sharing them through CTAs per SM).
bool partitionsSms(const Plan &P) {
  for (std::size_t I = 0; I < P.kernels.size(); ++I)
    for (std::size_t J = I + 1; J < P.kernels.size(); ++J) {
      const KernelDecision &A = P.kernels[I], &B = P.kernels[J];
      if (A.sms > 0 && B.sms > 0 && A.sm_first < B.sm_first + B.sms &&
          B.sm_first < A.sm_first + A.sms)
        return false;
    }
  return true;
}

} // namespace

Controller::Opaque *Controller::findOpaque(const std::string &Name) {
  for (Opaque &O : Opaques)
    if (O.tenant.name == Name)
      return &O;
  return nullptr;
}

void Controller::updateFree() {
  HeldByOpaque.reset();
  for (const Opaque &O : Opaques)
    HeldByOpaque |= O.held;
  FreeIds.clear();
  for (unsigned S : SmIds)
    if (!HeldByOpaque.test(S))
      FreeIds.push_back(S);
}

void Controller::addOpaque(const OpaqueTenant &In) {
  std::lock_guard<std::mutex> L(Mu);
  OpaqueTenant T = In;
  if (T.name.empty()) {
    warnOnce("opaque:noname",
             "an opaque partition needs a name; declaration ignored");
    return;
  }
  T.granularity = std::max(1u, T.granularity);
  T.min_sms = std::max(1u, T.min_sms);
  if (!std::isfinite(T.weight) || T.weight <= 0) {
    warnOnce("opaque:weight:" + T.name,
             "opaque partition '" + T.name +
                 "': weight must be a positive number; using 1");
    T.weight = 1.0;
  }
  Opaque *O = findOpaque(T.name);
  if (!O) {
    Opaques.emplace_back();
    O = &Opaques.back();
  }
  O->tenant = T;
  O->profile = nullptr;
  for (const KernelProfile &P : Profiles.kernels)
    if (P.name == T.name)
      O->profile = &P;
  decideAndApply("opaque_add");
}

void Controller::removeOpaque(const std::string &Name) {
  std::lock_guard<std::mutex> L(Mu);
  auto It = std::find_if(Opaques.begin(), Opaques.end(), [&](const Opaque &O) {
    return O.tenant.name == Name;
  });
  if (It == Opaques.end())
    return;
  Opaques.erase(It);
  updateFree();
  if (Opts.trace) {
    Opts.trace->opaqueHold(Name, {}, true);
    Opts.trace->opaqueTarget(Name, 0);
  }
  decideAndApply("opaque_remove");
}

unsigned Controller::opaqueTarget(const std::string &Name) const {
  std::lock_guard<std::mutex> L(Mu);
  for (const Opaque &O : Opaques)
    if (O.tenant.name == Name)
      return O.target;
  return 0;
}

std::vector<OpaqueAllocation> Controller::opaqueAllocations() const {
  std::lock_guard<std::mutex> L(Mu);
  std::vector<OpaqueAllocation> Out;
  for (const Opaque &O : Opaques) {
    OpaqueAllocation A;
    A.tenant = O.tenant;
    A.target = O.target;
    A.held = O.held;
    A.profiled = O.profile != nullptr;
    A.clear = O.traced_clear;
    Out.push_back(std::move(A));
  }
  return Out;
}

bool Controller::holdOpaque(const std::string &Name,
                            const std::vector<unsigned> &RealSmIds) {
  std::lock_guard<std::mutex> L(Mu);
  Opaque *O = findOpaque(Name);
  if (!O) {
    warnOnce("opaque:unknown:" + Name,
             "no opaque partition '" + Name +
                 "' was declared; its SMs are not held");
    return false;
  }
  SmMask Gpu;
  for (unsigned S : SmIds)
    Gpu.set(S);
  SmMask Held;
  for (unsigned S : RealSmIds) {
    if (S < kMaxSms && Gpu.test(S)) {
      Held.set(S);
      continue;
    }
    warnOnce("opaque:id:" + Name + ":" + std::to_string(S),
             "opaque partition '" + Name + "' reports SM id " +
                 std::to_string(S) +
                 ", which is not one of the GPU's; ignored");
  }
  if ((Held & HeldByOpaque & ~O->held).any())
    warnOnce("opaque:overlap:" + Name,
             "opaque partition '" + Name +
                 "' holds SMs another opaque partition holds");
  const bool Changed = Held != O->held;
  if (Changed) {
    O->held = Held;
    EpochOpaque = EpochOpaque || Held.any();
    updateFree();
    // Rewritten kernels shrink off the held SMs now and grow onto the ones
    // the partition no longer holds.
    decideAndApply("opaque_hold");
  }
  const bool Clear = opaqueClear(*O);
  if (Opts.trace && (Changed || Clear != O->traced_clear))
    Opts.trace->opaqueHold(Name, smIds(O->held), Clear);
  O->traced_clear = Clear;
  return Clear;
}

bool Controller::opaqueClear(const Opaque &O) {
  if (forgetAcknowledged())
    grantPending();
  for (Tracked &T : Kernels) {
    SmMask Busy = T.releasing | T.first_knobs;
    if (T.alloc.last_block_taken) {
      // Out of the plan, knobs kept: its last blocks may still run on its
      // mask, and on what it left without acknowledging (forgotten once
      // the last block was taken).
      if (!T.progress.finished)
        T.control->progress(T.progress);
      if (!T.progress.finished &&
          ((T.alloc.mask & O.held).any() || !T.control->knobsApplied()))
        return false;
    } else if (!T.alloc.preempted) {
      Busy |= T.alloc.mask;
    }
    if ((Busy & O.held).any())
      return false;
  }
  return true;
}

void Controller::planOpaque(const std::vector<Tracked *> &Active,
                            std::vector<std::string> &Notes) {
  const int Gpu = static_cast<int>(SmIds.size());
  const std::size_t NK = Active.size();
  // Every planned rewritten kernel counts 1, every partition its weight.
  std::vector<double> Weights(NK, 1.0);
  for (const Opaque &O : Opaques)
    Weights.push_back(O.tenant.weight);
  const std::vector<int> Shares = weightedSplit(Gpu, Weights);
  std::vector<int> Want(Opaques.size());
  for (std::size_t I = 0; I < Opaques.size(); ++I)
    Want[I] = Shares[NK + I];

  // Partitions with a profile under their name are planned by the policy
  // beside the profiled kernels, on the shares of both, when the policy
  // partitions SMs: a sharing policy's "every SM" cannot hold for work
  // that is confined to its own SMs.
  const bool AnyProfiled =
      std::any_of(Opaques.begin(), Opaques.end(),
                  [](const Opaque &O) { return O.profile; });
  if (AnyProfiled) {
    ProfileSet Set;
    Set.source = Profiles.source.empty() ? "(controller)" : Profiles.source;
    Set.gpu = Profiles.gpu;
    int Budget = 0;
    std::map<std::string, int> Seen;
    for (std::size_t I = 0; I < NK; ++I)
      if (Active[I]->profile) {
        Set.kernels.push_back(policyInput(*Active[I], Seen));
        Budget += Shares[I];
      }
    std::vector<std::string> Names(Opaques.size());
    for (std::size_t I = 0; I < Opaques.size(); ++I)
      if (Opaques[I].profile) {
        KernelProfile K = *Opaques[I].profile;
        if (Seen[K.name]++ > 0)
          K.name += "#opaque";
        Names[I] = K.name;
        Set.kernels.push_back(std::move(K));
        Budget += Shares[NK + I];
      }
    Set.gpu.num_sms = Budget;
    const std::string PolName(Pol->name());
    try {
      Plan P = Budget > 0 ? Pol->decide(Set, Opts.policy_options) : Plan{};
      bool Ok = Budget > 0 && P.kernels.size() == Set.kernels.size();
      for (const KernelDecision &D : P.kernels)
        Ok =
            Ok && D.sms >= 0 && D.sm_first >= 0 && D.sm_first + D.sms <= Budget;
      if (!Ok)
        Notes.push_back("opaque partitions: policy " + PolName +
                        " gave no plan within their shares; weighted shares");
      else if (!partitionsSms(P))
        Notes.push_back("opaque partitions: policy " + PolName +
                        " shares SMs; partitions get their weighted share");
      else
        for (std::size_t I = 0; I < Opaques.size(); ++I) {
          if (Names[I].empty())
            continue;
          for (const KernelDecision &D : P.kernels)
            if (D.name == Names[I] && !(D.round && *D.round > 0))
              Want[I] = D.sms;
        }
    } catch (const std::exception &E) {
      Notes.push_back("opaque partitions: policy " + PolName +
                      " cannot decide (" + E.what() + "); weighted shares");
    }
  }

  // Sizes the device allows: multiples of the granularity, at least the
  // minimum, and one SM left for rewritten kernels when any runs.
  int Room = Gpu - (NK > 0 ? 1 : 0);
  for (std::size_t I = 0; I < Opaques.size(); ++I) {
    Opaque &O = Opaques[I];
    const int Gran = static_cast<int>(O.tenant.granularity);
    const int Min =
        (static_cast<int>(O.tenant.min_sms) + Gran - 1) / Gran * Gran;
    int T = std::max(0, Want[I]) / Gran * Gran;
    T = std::max(T, Min);
    if (T > Room)
      T = std::max(0, Room) / Gran * Gran;
    if (T < Min) {
      T = 0;
      Notes.push_back("opaque partition " + O.tenant.name + ": no room for " +
                      std::to_string(Min) + " SMs; not planned");
    }
    Room -= T;
    if (static_cast<unsigned>(T) != O.target && Opts.trace)
      Opts.trace->opaqueTarget(O.tenant.name, static_cast<unsigned>(T));
    O.target = static_cast<unsigned>(T);
  }
}

void Controller::appendOpaque(Plan &P) const {
  if (Opaques.empty())
    return;
  P.gpu_sms = static_cast<int>(SmIds.size());
  for (const Opaque &O : Opaques) {
    KernelDecision D;
    D.name = O.tenant.name;
    D.kind = policy::KindOpaque;
    D.sms = static_cast<int>(O.target);
    D.klass = O.profile ? "profiled" : "unprofiled";
    D.held_sm_ids = smIds(O.held);
    P.kernels.push_back(std::move(D));
  }
}

} // namespace smpart
