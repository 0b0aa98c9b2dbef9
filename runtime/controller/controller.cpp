#include "smpart/controller.hpp"

#include "smpart/policy/curves.hpp"
#include "smpart/policy/input_error.hpp"
#include "smpart/trace.hpp"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace smpart {

using policy::KernelDecision;
using policy::KernelProfile;
using policy::Plan;
using policy::ProfileSet;

Controller::Controller(const policy::Policy &P, ProfileSet Prof,
                       std::vector<unsigned> Ids, ControllerOptions O)
    : Pol(&P), Fallback(policy::findPolicy("even")), Profiles(std::move(Prof)),
      SmIds(std::move(Ids)), Opts(std::move(O)) {
  std::sort(SmIds.begin(), SmIds.end());
  SmIds.erase(std::unique(SmIds.begin(), SmIds.end()), SmIds.end());
  SmIds.erase(std::remove_if(SmIds.begin(), SmIds.end(),
                             [](unsigned S) { return S >= kMaxSms; }),
              SmIds.end());
  if (!Opts.warn)
    Opts.warn = [](const std::string &M) {
      std::fprintf(stderr, "smpart: warning: %s\n", M.c_str());
    };
  Profiles.gpu.num_sms = static_cast<int>(SmIds.size());
  FreeIds = SmIds;
}

void Controller::warnOnce(const std::string &Key, const std::string &Msg) {
  if (Warned.size() > MaxWarnings || Warned.count(Key))
    return;
  Warned.insert(Key);
  if (Warned.size() > MaxWarnings) {
    Opts.warn("more than " + std::to_string(MaxWarnings) +
              " warnings; the rest are not given");
    return;
  }
  Opts.warn(Msg);
  if (Opts.trace)
    Opts.trace->note("warning", Msg);
}

void Controller::check(Tracked &T, const Status &S, const char *What) {
  if (!S.ok())
    warnOnce(std::string("status:") + What + ":" + T.alloc.name,
             std::string(What) + " on kernel '" + T.alloc.name +
                 "' failed: " + S.message());
}

// Positions count the SMs no opaque partition holds.
SmMask Controller::maskFor(int First, int Count) const {
  SmMask M;
  for (int I = First; I < First + Count && I < static_cast<int>(FreeIds.size());
       ++I)
    if (I >= 0)
      M.set(FreeIds[static_cast<std::size_t>(I)]);
  return M;
}

void Controller::onArrival(std::shared_ptr<KernelControl> K) {
  if (!K)
    return;
  std::lock_guard<std::mutex> L(Mu);
  Tracked T;
  T.control = std::move(K);
  T.alloc.id = T.control->id();
  T.alloc.name = T.control->name();
  // A fresh launch runs on every SM with its occupancy (initKnobs).
  for (unsigned S : SmIds)
    T.alloc.mask.set(S);
  T.alloc.ctas_per_sm = occupancyOf(T);
  for (const KernelProfile &P : Profiles.kernels)
    if (P.name == T.alloc.name)
      T.profile = &P;
  T.alloc.profiled = T.profile != nullptr;
  T.learned = &Learned[T.alloc.name];
  if (!T.profile)
    warnOnce("noprofile:" + T.alloc.name,
             "kernel '" + T.alloc.name + "' has no profile" +
                 (Profiles.source.empty() ? std::string()
                                          : " in " + Profiles.source) +
                 "; it gets an even share of the SMs");
  if (Opts.trace) {
    ControlProgress P;
    T.control->progress(P);
    Opts.trace->kernelArrival(T.alloc.id, T.alloc.name, P.total);
    Opts.trace->kernelStart(T.alloc.id, T.alloc.name);
  }
  Kernels.push_back(std::move(T));
  EpochPeak = std::max(EpochPeak, Kernels.size());
  decideAndApply("arrival");
}

void Controller::onLastBlockTaken(unsigned long long Id, bool SuccessorQueued) {
  std::lock_guard<std::mutex> L(Mu);
  for (Tracked &T : Kernels)
    if (T.alloc.id == Id && !T.alloc.last_block_taken) {
      T.alloc.last_block_taken = true;
      if (Opts.trace)
        Opts.trace->lastBlockTaken(Id, T.alloc.name);
      if (SuccessorQueued && successorMayWait()) {
        // Its SMs wait for its stream's next launch (the arrival
        // re-plans); it left the plan, and so did its grant.
        T.pending.reset();
        T.alloc.waiting.reset();
        if (!SuccessorAwaitedSince)
          SuccessorAwaitedSince = Report.index;
        return;
      }
      decideAndApply("last_block_taken");
      return;
    }
}

void Controller::readProgress(Tracked &T) {
  Status S = T.control->progress(T.progress);
  if (!S.ok())
    check(T, S, "progress");
  if (T.alloc.last_block_taken ||
      !(T.progress.finished ||
        (T.progress.total > 0 && T.progress.taken >= T.progress.total)))
    return;
  T.alloc.last_block_taken = true;
  if (Opts.trace)
    Opts.trace->lastBlockTaken(T.alloc.id, T.alloc.name);
}

void Controller::onDeparture(unsigned long long Id, bool SuccessorQueued) {
  std::lock_guard<std::mutex> L(Mu);
  auto It = std::find_if(Kernels.begin(), Kernels.end(),
                         [&](const Tracked &T) { return T.alloc.id == Id; });
  if (It == Kernels.end())
    return;
  if (Opts.trace)
    Opts.trace->kernelDone(Id, It->alloc.name);
  // One that took its last block left the plan then, and the kernels
  // planned for since are the ones left.
  const bool OutOfPlan = It->alloc.last_block_taken;
  Kernels.erase(It); // finished: whatever it was releasing is free
  if (Learned.size() > MaxLearnedNames)
    for (auto L = Learned.begin(); L != Learned.end();)
      L = std::any_of(Kernels.begin(), Kernels.end(),
                      [&](const Tracked &T) { return T.learned == &L->second; })
              ? std::next(L)
              : Learned.erase(L);
  if (SuccessorQueued && successorMayWait()) {
    // Its SMs wait for its stream's next launch; grants that waited for
    // what it was releasing go out now.
    grantPending();
    if (!SuccessorAwaitedSince)
      SuccessorAwaitedSince = Report.index;
  } else if (!Kernels.empty() || !Opaques.empty())
    decideAndApply("departure", OutOfPlan);
}

bool Controller::successorMayWait() const {
  // Only a re-plan gives SMs to a kernel the plan preempted (more kernels
  // than SMs, a power-aware round) or to an opaque partition below its
  // target: if one may be waiting, the stream's next launch might itself
  // wait for it. A kernel preempted only until its grant's SMs are
  // acknowledged gets them from grantPending().
  for (const Opaque &O : Opaques)
    if (O.held.count() < O.target)
      return false;
  for (const Tracked &T : Kernels)
    if (!T.alloc.last_block_taken && T.alloc.preempted && !T.pending)
      return false;
  return true;
}

void Controller::onKnobsApplied(unsigned long long) {
  std::lock_guard<std::mutex> L(Mu);
  if (forgetAcknowledged())
    grantPending();
}

void Controller::grantPending() {
  // Pending grants belong to kernels still planned: a kernel that took its
  // last block left the plan, and that decision dropped its grant.
  for (Tracked &T : Kernels)
    if (T.pending) {
      const KernelAllocation Target = *T.pending;
      applyGrow(T, Target);
    }
}

void Controller::replan() {
  std::lock_guard<std::mutex> L(Mu);
  decideAndApply("request");
}

SmMask Controller::releasedByOthers(const Tracked &T) const {
  SmMask M;
  for (const Tracked &U : Kernels)
    if (&U != &T && !U.alloc.last_block_taken)
      M |= U.releasing;
  return M;
}

bool Controller::forgetAcknowledged() {
  bool Freed = false;
  for (Tracked &U : Kernels)
    if ((U.releasing.any() || U.first_knobs.any()) &&
        (U.alloc.last_block_taken || U.control->knobsApplied())) {
      Freed |= U.releasing.any();
      U.releasing.reset();
      U.first_knobs.reset();
    }
  return Freed;
}

Plan Controller::lastPlan() const {
  std::lock_guard<std::mutex> L(Mu);
  return Last;
}

std::vector<KernelAllocation> Controller::allocations() const {
  std::lock_guard<std::mutex> L(Mu);
  std::vector<KernelAllocation> Out;
  for (const Tracked &T : Kernels)
    Out.push_back(T.alloc);
  return Out;
}

unsigned long long Controller::decisionCount() const {
  std::lock_guard<std::mutex> L(Mu);
  return Decisions;
}

unsigned long long Controller::deferredGrants() const {
  std::lock_guard<std::mutex> L(Mu);
  return Deferred;
}

std::size_t Controller::pendingGrants() const {
  std::lock_guard<std::mutex> L(Mu);
  std::size_t N = 0;
  for (const Tracked &T : Kernels)
    N += T.pending.has_value();
  return N;
}

KernelProfile Controller::policyInput(const Tracked &T,
                                      std::map<std::string, int> &Seen) {
  KernelProfile K = *T.profile;
  // Two launches of one kernel: plan them as two kernels.
  if (Seen[K.name]++ > 0)
    K.name += "#" + std::to_string(T.alloc.id);
  if (T.progress.total > 0)
    K.total_blocks = static_cast<long long>(T.progress.total);
  K.executed_blocks = static_cast<long long>(
      std::min(T.progress.done,
               T.progress.total > 0 ? T.progress.total : T.progress.done));
  if (K.total_blocks && K.executed_blocks > *K.total_blocks)
    K.executed_blocks = *K.total_blocks;
  return K;
}

// Plans the kernels in Active (arrival order). Unprofiled kernels take the
// last even shares; the policy plans the profiled ones on the SMs before
// them. The returned plan names every active kernel once, with SM ordinals
// over the whole GPU.
Plan Controller::planFor(std::vector<Tracked *> &Active, const char *Trigger,
                         std::vector<std::string> &Notes) {
  // Opaque partitions' sizes come first; the rewritten kernels are planned
  // over the SMs the partitions do not hold now.
  if (!Opaques.empty())
    planOpaque(Active, Notes);
  const int N = static_cast<int>(FreeIds.size());
  std::vector<Tracked *> Prof, Unprof;
  for (Tracked *T : Active)
    (T->profile ? Prof : Unprof).push_back(T);

  // More kernels than SMs: the latest arrivals wait (sms 0) until SMs free
  // up. Split off at once: thousands of queued kernels stay linear.
  std::vector<Tracked *> Queued;
  if (static_cast<int>(Active.size()) > N) {
    const std::size_t Keep = static_cast<std::size_t>(std::max(N, 0));
    Queued.assign(Active.rbegin(),
                  Active.rbegin() +
                      static_cast<std::ptrdiff_t>(Active.size() - Keep));
    Active.resize(Keep);
    const std::set<Tracked *> Waits(Queued.begin(), Queued.end());
    auto Drop = [&](std::vector<Tracked *> &V) {
      V.erase(std::remove_if(V.begin(), V.end(),
                             [&](Tracked *T) { return Waits.count(T) > 0; }),
              V.end());
    };
    Drop(Prof);
    Drop(Unprof);
  }

  std::vector<int> Shares =
      policy::evenSplit(N, static_cast<int>(Prof.size() + Unprof.size()));
  int Reserved = 0;
  for (std::size_t I = 0; I < Unprof.size(); ++I)
    Reserved += Shares[Shares.size() - 1 - I];
  const int Budget = N - Reserved;

  Plan Out;
  Out.num_sms = N; // gpu_sms: appendOpaque
  Out.policy = std::string(Pol->name());

  if (!Prof.empty()) {
    ProfileSet Set;
    Set.source = Profiles.source.empty() ? "(controller)" : Profiles.source;
    Set.gpu = Profiles.gpu;
    Set.gpu.num_sms = Budget;
    std::map<std::string, int> Seen;
    for (Tracked *T : Prof)
      Set.kernels.push_back(policyInput(*T, Seen));
    Plan P;
    bool Ok = false;
    try {
      P = Pol->decide(Set, Opts.policy_options);
      Ok = true;
      // The plan must name each kernel once and stay within the budget.
      if (P.kernels.size() != Set.kernels.size())
        Ok = false;
      for (const KernelDecision &D : P.kernels)
        if (D.sms < 0 || D.sm_first < 0 || D.sm_first + D.sms > Budget)
          Ok = false;
      if (!Ok)
        warnOnce("badplan:" + std::string(Pol->name()),
                 "policy " + std::string(Pol->name()) +
                     " returned a plan outside the " + std::to_string(Budget) +
                     " SMs it was given; using even");
    } catch (const std::exception &E) {
      warnOnce("policy:" + std::string(E.what()),
               "policy " + std::string(Pol->name()) + " cannot decide (" +
                   E.what() + "); using even");
    }
    if (!Ok) {
      P = Fallback->decide(Set, Opts.policy_options);
      Out.policy = std::string(Pol->name()) + "->even";
    }
    Out.mode = P.mode;
    Out.gated_sms = P.gated_sms;
    for (std::string &Note : P.notes)
      Notes.push_back(std::move(Note));
    // Map decisions back to kernels by (unique) name, in Prof order.
    for (std::size_t I = 0; I < Prof.size(); ++I) {
      const std::string &Name = Set.kernels[I].name;
      auto It =
          std::find_if(P.kernels.begin(), P.kernels.end(),
                       [&](const KernelDecision &D) { return D.name == Name; });
      KernelDecision D = It != P.kernels.end() ? *It : KernelDecision{};
      D.name = Name;
      Out.kernels.push_back(std::move(D));
    }
  } else {
    Out.mode = "even";
  }

  int Next = Budget;
  for (std::size_t I = 0; I < Unprof.size(); ++I) {
    KernelDecision D;
    D.name = Unprof[I]->alloc.name;
    D.sms = Shares[Prof.size() + I];
    D.sm_first = Next;
    D.klass = "unprofiled";
    Next += D.sms;
    Out.kernels.push_back(std::move(D));
  }
  for (Tracked *T : Queued) {
    KernelDecision D;
    D.name = T->alloc.name;
    D.klass = "queued";
    Out.kernels.push_back(std::move(D));
    Notes.push_back(T->alloc.name +
                    ": more kernels than SMs; waits (preempted)");
  }
  // Active order now matches Out.kernels: profiled, unprofiled, queued.
  Active.clear();
  Active.insert(Active.end(), Prof.begin(), Prof.end());
  Active.insert(Active.end(), Unprof.begin(), Unprof.end());
  Active.insert(Active.end(), Queued.rbegin(), Queued.rend());
  (void)Trigger;
  return Out;
}

void Controller::decideAndApply(const char *Trigger, bool KeepOnlinePlan) {
  SuccessorAwaitedSince.reset(); // this re-plan covers the SMs left
  // Progress first: finished kernels leave, the rest feed Eq. 1.
  std::vector<Tracked *> Active;
  for (Tracked &T : Kernels) {
    readProgress(T);
    if (!T.alloc.last_block_taken)
      Active.push_back(&T);
  }
  if (Active.empty() && Opaques.empty())
    return;

  std::vector<std::string> Notes;
  Plan P = planFor(Active, Trigger, Notes);
  P.notes = Notes;
  std::vector<FinishingKernel> Finishing;
  for (const Tracked &T : Kernels)
    if (Opts.online && T.alloc.last_block_taken && !T.alloc.preempted) {
      Finishing.push_back({T.alloc.name, {}});
      for (std::size_t I = 0; I < FreeIds.size(); ++I)
        if (T.alloc.mask.test(FreeIds[I]))
          Finishing.back().sms.push_back(static_cast<int>(I));
    }
  bool Amended = false;
  if (Opts.online && !Active.empty())
    if (std::optional<Plan> A = Opts.online->onReplan(Trigger, P, Finishing)) {
      // Same kernels, same order, within the GPU; else the offline plan.
      bool Ok = A->kernels.size() == P.kernels.size();
      for (std::size_t I = 0; Ok && I < P.kernels.size(); ++I) {
        const KernelDecision &D = A->kernels[I];
        Ok = D.name == P.kernels[I].name && D.sms >= 0 && D.sm_first >= 0 &&
             D.sm_first + D.sms <= static_cast<int>(FreeIds.size());
      }
      // A plan handed back unchanged stays the offline policy's; an amended
      // one is the online policy's, in the plan and in the trace.
      auto Body = [](const Plan &X) {
        nlohmann::ordered_json J = policy::planToJson(X);
        J.erase("policy");
        return J;
      };
      if (Ok && Body(*A) != Body(P)) {
        P = std::move(*A);
        P.policy = std::string(Opts.online->name());
        P.num_sms = static_cast<int>(FreeIds.size()); // as runOnline does
        Amended = true;
      } else if (!Ok)
        warnOnce("online-replan:" + std::string(Opts.online->name()),
                 "online policy " + std::string(Opts.online->name()) +
                     " amended a re-plan outside its kernels or SMs; "
                     "keeping the offline plan");
    }
  if (KeepOnlinePlan && !Amended && Opaques.empty() &&
      OnlinePlanned.size() == Active.size() &&
      std::equal(Active.begin(), Active.end(), OnlinePlanned.begin(),
                 [](const Tracked *T, unsigned long long Id) {
                   return T->alloc.id == Id;
                 })) {
    grantPending();
    return;
  }
  // Opaque entries last (applyPlan reads one decision per Active kernel),
  // after the online policy, which plans rewritten kernels only.
  appendOpaque(P);
  applyPlan(std::move(P), Active, Trigger);
}

void Controller::applyPlan(Plan P, const std::vector<Tracked *> &Active,
                           const char *Trigger) {
  ++Decisions;
  OnlinePlanned.clear();
  if (std::string_view(Trigger) == "epoch") // not a re-plan's amendment
    for (const Tracked *T : Active)
      OnlinePlanned.push_back(T->alloc.id);

  if (Opts.trace) {
    nlohmann::json Inputs = nlohmann::json::array();
    for (const Tracked &T : Kernels)
      Inputs.push_back({{"kernel", T.alloc.name},
                        {"kernel_id", T.alloc.id},
                        {"executed_blocks", T.progress.done},
                        {"taken_blocks", T.progress.taken},
                        {"total_blocks", T.progress.total},
                        {"profiled", T.alloc.profiled},
                        {"last_block_taken", T.alloc.last_block_taken}});
    // Offline re-plans name the configured policy (even when it fell back);
    // an online step, or a re-plan the online policy amended, names it.
    const bool Online = std::string_view(Trigger) == "epoch" ||
                        (Opts.online && P.policy == Opts.online->name());
    nlohmann::json In = {{"kernels", Inputs}, {"sm_ids", SmIds}};
    if (!Opaques.empty()) {
      nlohmann::json Parts = nlohmann::json::array();
      for (const Opaque &O : Opaques)
        Parts.push_back({{"partition", O.tenant.name},
                         {"min_sms", O.tenant.min_sms},
                         {"granularity", O.tenant.granularity},
                         {"weight", O.tenant.weight},
                         {"profiled", O.profile != nullptr},
                         {"held_sm_ids", smIds(O.held)}});
      In["opaque"] = std::move(Parts);
    }
    Opts.trace->decision(Online ? P.policy : std::string(Pol->name()), Trigger,
                         In, policy::planToJson(P), P.notes);
  }

  // Targets.
  std::vector<KernelAllocation> Targets;
  for (std::size_t I = 0; I < Active.size(); ++I) {
    const KernelDecision &D = P.kernels[I];
    Tracked &T = *Active[I];
    KernelAllocation A = T.alloc;
    A.preempted = D.sms <= 0 || (D.round && *D.round > 0);
    if (!A.preempted)
      A.mask = maskFor(D.sm_first, D.sms);
    unsigned Occ = occupancyOf(T);
    unsigned Ctas = D.ctas_per_sm > 0 ? static_cast<unsigned>(D.ctas_per_sm)
                                      : (Occ > 0 ? Occ : T.alloc.ctas_per_sm);
    if (Occ > 0)
      Ctas = std::min(Ctas, Occ);
    A.ctas_per_sm = std::max(1u, std::min(Ctas, kMaxCtasPerSm));
    A.bypass_ctas_per_sm =
        std::min(static_cast<unsigned>(std::max(0, D.bypass_ctas_per_sm)),
                 A.ctas_per_sm);
    Targets.push_back(A);
  }
  // Shrink every kernel first, then grow: SM sets stay disjoint throughout.
  // A kernel that is no longer planned (its last block was taken) keeps
  // its knobs and waits for nothing.
  for (Tracked &T : Kernels)
    if (T.alloc.last_block_taken) {
      T.pending.reset();
      T.alloc.waiting.reset();
    }
  for (std::size_t I = 0; I < Active.size(); ++I)
    if (!Active[I]->fresh)
      applyShrink(*Active[I], Targets[I]);
  // Kernels that had not started, or were quick, acknowledged already.
  forgetAcknowledged();
  // The arrival: its knobs still name every SM, and must name none that a
  // running kernel is still leaving before its first CTA starts.
  for (std::size_t I = 0; I < Active.size(); ++I)
    if (Active[I]->fresh)
      applyShrink(*Active[I], Targets[I]);
  for (std::size_t I = 0; I < Active.size(); ++I)
    applyGrow(*Active[I], Targets[I]);
  for (Tracked &T : Kernels)
    T.fresh = false;
  Last = std::move(P);
}

/// The knob set a kernel's current allocation stands for.
static KnobSet knobsOf(const KernelAllocation &A) {
  KnobSet K;
  K.mask = A.mask;
  K.ctas_per_sm = A.ctas_per_sm;
  K.bypass_ctas_per_sm = A.bypass_ctas_per_sm;
  K.preempt = A.preempted;
  return K;
}

void Controller::writeKnobs(Tracked &T, const KnobSet &Next) {
  KernelAllocation &Cur = T.alloc;
  const KnobSet Was = knobsOf(Cur);
  if (Next == Was)
    return;
  // One write for the whole step: the device never runs the mask of one
  // plan with the CTAs per SM of another.
  check(T, T.control->setKnobs(Next), "setKnobs");
  T.knobs_written = true;
  Cur.mask = Next.mask;
  Cur.ctas_per_sm = Next.ctas_per_sm;
  Cur.bypass_ctas_per_sm = Next.bypass_ctas_per_sm;
  Cur.preempted = Next.preempt;
  if (!Opts.trace)
    return;
  const unsigned long long Id = Cur.id;
  if (Next.preempt && !Was.preempt)
    Opts.trace->preempt(Id, Cur.name);
  if (Next.mask != Was.mask)
    Opts.trace->knob(Id, Cur.name, "sm_mask", smIds(Next.mask));
  if (Next.ctas_per_sm != Was.ctas_per_sm)
    Opts.trace->knob(Id, Cur.name, "ctas_per_sm", Next.ctas_per_sm);
  if (Next.bypass_ctas_per_sm != Was.bypass_ctas_per_sm)
    Opts.trace->knob(Id, Cur.name, "bypass_ctas_per_sm",
                     Next.bypass_ctas_per_sm);
}

void Controller::applyShrink(Tracked &T, const KernelAllocation &Tgt) {
  KernelAllocation &Cur = T.alloc;
  // What a kernel gives up it may still take blocks on until it
  // acknowledges (releasing); a fresh kernel never ran anywhere.
  const SmMask Held = Cur.preempted || T.fresh ? SmMask() : Cur.mask;
  KnobSet Next = knobsOf(Cur);
  if (Tgt.preempted) {
    // Keeps its mask, less what opaque partitions hold (an empty mask is
    // no valid knob); no CTA takes work while preempted.
    Next.preempt = true;
    if ((Cur.mask & ~HeldByOpaque).any())
      Next.mask = Cur.mask & ~HeldByOpaque;
  } else {
    SmMask Keep = Cur.mask & Tgt.mask;
    if (T.fresh)
      Keep &= ~releasedByOthers(T);
    if (Keep.none())
      // Its new SMs are all new: none of its current ones may stay while
      // the others grow onto them, and an empty mask is no valid knob. It
      // stops taking blocks until the grow step gives it the new mask and
      // resumes it.
      Next.preempt = true;
    else
      Next.mask = Keep;
    if (Tgt.ctas_per_sm < Cur.ctas_per_sm)
      Next.ctas_per_sm = Tgt.ctas_per_sm;
    Next.bypass_ctas_per_sm = Tgt.bypass_ctas_per_sm;
  }
  if (Next.preempt && !Cur.preempted)
    T.releasing |= Held;
  else if (!Next.preempt)
    T.releasing |= Held & ~Next.mask;
  // A launch announced after its first CTAs started (queued behind work on
  // its stream) ran under the default knobs, every SM: until it
  // acknowledges, opaque partitions may not count on the SMs it leaves.
  // (Rewritten kernels do: the controller treats a fresh kernel as holding
  // nothing, README "Integration".)
  if (T.fresh)
    T.first_knobs = Cur.mask & ~(Next.preempt ? SmMask() : Next.mask);
  writeKnobs(T, Next);
}

void Controller::applyGrow(Tracked &T, const KernelAllocation &Tgt) {
  KernelAllocation &Cur = T.alloc;
  const unsigned long long Id = Cur.id;
  Cur.waiting.reset();
  if (Tgt.preempted) {
    T.pending.reset();
    if (Opts.trace)
      Opts.trace->allocation(Id, Cur.name, 0, Cur.ctas_per_sm, true);
    return;
  }
  // SMs another kernel gave up but may still take blocks on wait for its
  // acknowledgement (onKnobsApplied() grants them); SMs this kernel
  // already runs on never wait.
  const SmMask Held = Cur.preempted ? SmMask() : Cur.mask;
  const SmMask Waiting = Tgt.mask & releasedByOthers(T) & ~Held;
  const SmMask Mask = Tgt.mask & ~Waiting;
  if (Waiting.any()) {
    if (!T.pending)
      ++Deferred;
    T.pending = Tgt;
    Cur.waiting = Waiting;
    if (Opts.trace)
      Opts.trace->note("grant_waits",
                       "kernel '" + Cur.name + "' waits for SMs " +
                           nlohmann::json(smIds(Waiting)).dump() +
                           " until the kernels leaving them acknowledge");
  } else {
    T.pending.reset();
  }
  if (Mask.none()) {
    // Nothing it may run on yet: it stays preempted (applyShrink preempted
    // a kernel whose SMs all change) until onKnobsApplied() grants the rest.
    if (Opts.trace)
      Opts.trace->allocation(Id, Cur.name, 0, Cur.ctas_per_sm, true);
    return;
  }
  const bool WasPreempted = Cur.preempted;
  const bool Gained =
      (Mask & ~Cur.mask).any() || Tgt.ctas_per_sm > Cur.ctas_per_sm;
  KnobSet Next = knobsOf(Cur);
  Next.mask = Mask;
  if (Tgt.ctas_per_sm > Cur.ctas_per_sm)
    Next.ctas_per_sm = Tgt.ctas_per_sm;
  Next.preempt = false;
  writeKnobs(T, Next);
  // The write above cleared preemption: resume() and grow() only relaunch.
  if (WasPreempted) {
    check(T, T.control->resume(), "resume");
    if (Opts.trace)
      Opts.trace->resume(Id, Cur.name);
  } else if (Gained) {
    check(T, T.control->grow(), "grow");
    if (Opts.trace)
      Opts.trace->knob(Id, Cur.name, "grow", true);
  }
  if (Opts.trace)
    Opts.trace->allocation(Id, Cur.name,
                           static_cast<unsigned>(Cur.mask.count()),
                           Cur.ctas_per_sm, false);
}

} // namespace smpart
