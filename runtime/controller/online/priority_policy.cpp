// Plain priority mode (priority_policy.hpp; controller README,
// "Latency-critical co-location").
#include "priority_policy.hpp"
#include "report_kernels.hpp"

#include "smpart/policy/curves.hpp"
#include "smpart/policy/policy.hpp"

#include <algorithm>

namespace smpart::online {

using policy::KernelDecision;
using policy::Plan;

namespace {
/// Kernels the controller plans outside the policy keep their SMs.
bool foreign(const KernelDecision &D) {
  return D.klass == "unprofiled" || D.klass == "queued";
}
/// The SMs the policy's kernels share: the controller puts the others
/// after them.
int policyBudget(const Plan &P) {
  int Budget = P.num_sms;
  for (const KernelDecision &D : P.kernels)
    if (foreign(D) && D.sms > 0)
      Budget = std::min(Budget, D.sm_first);
  return Budget;
}
/// True when \p D is a kernel \p Profiles marks high-priority.
bool highPriority(const policy::ProfileSet &Profiles, const KernelDecision &D) {
  const policy::KernelProfile *P = profileNamed(Profiles, D.name);
  return P && !foreign(D) && P->priority == policy::Priority::High;
}
/// Lays the policy's kernels out contiguously from \p First: the others
/// in plan order, then the high-priority ones, at the end of the run. The
/// plan's order is arrival order, so a best-effort launch arriving while a
/// high-priority kernel runs would otherwise put that kernel first and
/// move it: preempt it, relaunch it on other SMs (on an H200 beside a
/// stream of sgemm launches, every latency-critical launch was moved).
void layOut(Plan &P, int First, const policy::ProfileSet &Profiles) {
  for (bool High : {false, true})
    for (KernelDecision &D : P.kernels)
      if (!foreign(D) && highPriority(Profiles, D) == High) {
        D.sm_first = First;
        First += D.sms;
      }
}
} // namespace

std::set<int>
heldByHighPriority(const policy::ProfileSet &Profiles,
                   const std::vector<FinishingKernel> &Finishing) {
  std::set<int> Held;
  for (const FinishingKernel &F : Finishing)
    if (const policy::KernelProfile *P = profileNamed(Profiles, F.name))
      if (P->priority == policy::Priority::High)
        Held.insert(F.sms.begin(), F.sms.end());
  return Held;
}

std::pair<int, int> freeRun(int Budget, const std::set<int> &Held) {
  std::pair<int, int> Best{0, 0};
  for (int First = 0; First < Budget;) {
    int End = First;
    while (End < Budget && !Held.count(End))
      ++End;
    if (End - First > Best.second - Best.first)
      Best = {First, End};
    First = End + 1;
  }
  return Best;
}

PriorityPolicy::PriorityPolicy(policy::ProfileSet P, PriorityOptions O)
    : Profiles(std::move(P)), Opts(O) {}

bool PriorityPolicy::isHigh(const KernelDecision &D) const {
  return highPriority(Profiles, D);
}

int PriorityPolicy::neededSms(const policy::KernelProfile &P,
                              int Budget) const {
  if (Budget <= 1 || P.by_sms.empty())
    return std::max(Budget, 0); // no curve: all it can get
  const double Best = policy::timeAtSms(P, Budget);
  for (int S = 1; S < Budget; ++S)
    if (policy::timeAtSms(P, S) <= (1 + Opts.slack) * Best)
      return S;
  return Budget;
}

std::optional<Plan>
PriorityPolicy::prioritise(const Plan &Offline, const char *Why,
                           const std::set<int> &Held) const {
  std::vector<std::size_t> High, Best;
  for (std::size_t I = 0; I < Offline.kernels.size(); ++I)
    if (!foreign(Offline.kernels[I]))
      (isHigh(Offline.kernels[I]) ? High : Best).push_back(I);
  // Nothing latency-critical runs (the best-effort work has the offline
  // plan's SMs back), or only latency-critical kernels do.
  if ((High.empty() && Held.empty()) || Best.empty())
    return std::nullopt;
  const auto [Lo, Hi] = freeRun(policyBudget(Offline), Held);
  const int Budget = Hi - Lo;
  Plan P = Offline;
  P.policy = std::string(name());
  P.mode = "priority";
  P.gated_sms = 0;
  bool Exclusively = false;
  for (std::size_t I : High)
    Exclusively =
        Exclusively ||
        Exclusive.count(std::string(baseName(Offline.kernels[I].name)));
  int Left = Budget;
  if (Exclusively) {
    // Learned: SMs alone do not isolate it; the best-effort work stops.
    const std::vector<int> Shares =
        policy::evenSplit(Budget, static_cast<int>(High.size()));
    for (std::size_t J = 0; J < High.size(); ++J)
      P.kernels[High[J]].sms = Shares[J];
    Left = 0;
  } else {
    // In plan order (arrival order): a later one waits if none are left.
    for (std::size_t I : High) {
      const int Need = std::min(
          Left, neededSms(*profileNamed(Profiles, P.kernels[I].name), Budget));
      P.kernels[I].sms = Need;
      Left -= Need;
    }
  }
  const std::vector<int> Rest =
      policy::evenSplit(Left, static_cast<int>(Best.size()));
  for (std::size_t J = 0; J < Best.size(); ++J) {
    KernelDecision &D = P.kernels[Best[J]];
    D.sms = Rest[J];
    D.klass = "best-effort";
    D.predicted_np.reset();
  }
  for (std::size_t I : High) {
    KernelDecision &D = P.kernels[I];
    D.klass = "latency-critical";
    D.predicted_np.reset();
    P.notes.push_back(policy::formatNote(
        "priority: %s (high priority) %s: %d of %d SMs%s", D.name.c_str(), Why,
        D.sms, Budget,
        Exclusively ? ", best-effort kernels preempted (learned)" : ""));
  }
  if (!Held.empty())
    P.notes.push_back(policy::formatNote(
        "priority: %zu SMs held for high-priority kernels finishing their "
        "last blocks",
        Held.size()));
  if (Left == 0)
    P.notes.push_back("priority: best-effort kernels preempted meanwhile");
  layOut(P, Lo, Profiles);
  return P;
}

std::optional<Plan>
PriorityPolicy::onReplan(std::string_view Trigger, const Plan &Offline,
                         const std::vector<FinishingKernel> &Finishing) {
  return prioritise(Offline, Trigger == "arrival" ? "arrived" : "runs",
                    heldByHighPriority(Profiles, Finishing));
}

std::optional<Plan> PriorityPolicy::onEpoch(const EpochReport &R,
                                            const Plan &Current) {
  const int N = Current.num_sms > 0 ? Current.num_sms : Profiles.gpu.num_sms;
  // One decision per report kernel, in its order, from what runs now.
  Plan Now;
  Now.num_sms = N;
  bool Interfered = false, Others = false;
  for (const EpochSample &S : R.kernels) {
    const policy::KernelProfile *P = profileNamed(Profiles, S.name);
    if (!P)
      return std::nullopt; // its SMs are the controller's, not ours to lay out
    KernelDecision D;
    D.name = S.name;
    D.sms = static_cast<int>(S.sms);
    D.ctas_per_sm = static_cast<int>(S.ctas_per_sm);
    D.bypass_ctas_per_sm = static_cast<int>(S.bypass_ctas_per_sm);
    const bool High = P->priority == policy::Priority::High;
    Others = Others || (!High && S.sms > 0);
    // Slower on its own SMs than alone there: DRAM or L2, shared with the
    // best-effort kernels, costs it what SMs were meant to keep.
    if (High && S.steady && !S.preempted && S.sms > 0 && S.np > 0 &&
        S.np < 1 - Opts.slack && !Exclusive.count(P->name)) {
      Interfered = true;
      Exclusive.insert(P->name);
      Now.notes.push_back(policy::formatNote(
          "priority: %s runs at %.3f of its isolated rate on %u SMs",
          S.name.c_str(), S.np, S.sms));
    }
    Now.kernels.push_back(std::move(D));
  }
  if (!Interfered || !Others)
    return std::nullopt;
  return prioritise(Now, "interfered with", {});
}

std::optional<Plan>
HighPriorityHold::onReplan(std::string_view Trigger, const Plan &Offline,
                           const std::vector<FinishingKernel> &Finishing) {
  std::optional<Plan> Inner =
      this->Inner->onReplan(Trigger, Offline, Finishing);
  const std::set<int> Held = heldByHighPriority(Profiles, Finishing);
  if (Held.empty())
    return Inner;
  Plan P = Inner ? std::move(*Inner) : Offline;
  const auto [Lo, Hi] = freeRun(policyBudget(P), Held);
  int Total = 0;
  for (const KernelDecision &D : P.kernels)
    if (!foreign(D))
      Total += D.sms;
  // Each share scaled into the SMs left, the remainder in plan order.
  const int Avail = Hi - Lo;
  if (Total > Avail) {
    int Given = 0;
    for (KernelDecision &D : P.kernels)
      if (!foreign(D)) {
        D.sms = D.sms * Avail / Total;
        Given += D.sms;
      }
    for (KernelDecision &D : P.kernels)
      if (!foreign(D) && Given < Avail) {
        ++D.sms;
        ++Given;
      }
  }
  layOut(P, Lo, Profiles);
  P.notes.push_back(policy::formatNote(
      "%s: %zu SMs held for high-priority kernels finishing their last "
      "blocks",
      std::string(name()).c_str(), Held.size()));
  return P;
}

} // namespace smpart::online
