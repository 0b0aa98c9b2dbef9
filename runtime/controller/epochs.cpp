// Epochs of measurement (smpart/controller_epoch.hpp; README "Epochs"):
// per kernel and per epoch, blocks executed, rate, normalised progress
// against the isolated rate at the same allocation and TLP's sampling
// period, from the progress counters the runtime mirrors to host memory.
// Nothing here runs on the launch path; once warm, an epoch allocates
// nothing unless it traces or learns a new allocation.
#include "smpart/controller.hpp"

#include "smpart/policy/curves.hpp"
#include "smpart/trace.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace smpart {

using policy::Plan;

const char *isolatedSourceName(IsolatedSource S) {
  switch (S) {
  case IsolatedSource::Profile:
    return "profile";
  case IsolatedSource::Learned:
    return "learned";
  case IsolatedSource::None:
    break;
  }
  return "none";
}

namespace {
unsigned learnKey(unsigned Sms, unsigned Ctas) {
  return Sms << 16 | (Ctas & 0xffffu);
}
/// Weight of a new steady measurement in a learned isolated rate: noise
/// halves with every epoch, and a drifting kernel is followed in a few.
constexpr double LearnWeight = 0.5;
} // namespace

EpochReport Controller::lastEpoch() const {
  std::lock_guard<std::mutex> L(Mu);
  return Report;
}

double Controller::isolatedRate(const Tracked &T, unsigned Sms, unsigned Ctas,
                                IsolatedSource &Source) const {
  Source = IsolatedSource::None;
  if (Sms == 0 || Ctas == 0)
    return 0;
  // A rate measured alone at this very allocation beats any curve.
  if (T.learned) {
    auto It = T.learned->find(learnKey(Sms, Ctas));
    if (It != T.learned->end()) {
      Source = IsolatedSource::Learned;
      return It->second;
    }
  }
  const double Rate = profileRate(T, Sms, Ctas);
  if (Rate > 0)
    Source = IsolatedSource::Profile;
  return Rate;
}

double Controller::profileRate(const Tracked &T, unsigned Sms,
                               unsigned Ctas) const {
  const policy::KernelProfile *P = T.profile;
  if (Sms == 0 || Ctas == 0 || !P || P->by_sms.empty())
    return 0;
  // The curves time the profiled launch: its blocks per ms hold for any
  // grid of the kernel (the live total only stands in when the profile
  // does not say how many blocks it timed).
  const double Total = P->total_blocks ? static_cast<double>(*P->total_blocks)
                                       : static_cast<double>(T.progress.total);
  if (Total <= 0)
    return 0;
  // by_sms runs used the kernel's occupancy; by_ctas_per_sm scales it to
  // the CTAs per SM it holds (the curves' separable model).
  double Ms = policy::timeAtSms(*P, Sms);
  if (!P->by_ctas.empty()) {
    unsigned Ref = occupancyOf(T);
    if (Ref == 0)
      Ref = static_cast<unsigned>(P->by_ctas.back().ctas);
    Ms *= policy::timeAtCtas(*P, Ctas) / policy::timeAtCtas(*P, Ref);
  }
  if (!(Ms > 0))
    return 0;
  return Total / (Ms * 1000.0);
}

void Controller::measure(Tracked &T, EpochSample &S, double Us, bool Alone) {
  const KernelAllocation &A = T.alloc;
  S.id = A.id;
  S.name.assign(A.name); // reuses the sample's buffer
  S.preempted = A.preempted;
  S.sms = A.preempted ? 0u : static_cast<unsigned>(A.mask.count());
  S.ctas_per_sm = A.ctas_per_sm;
  S.bypass_ctas_per_sm = A.bypass_ctas_per_sm;
  S.done = T.progress.done;
  S.total = T.progress.total;
  const unsigned long long Before = T.epoch_done.value_or(S.done);
  S.blocks = S.done >= Before ? S.done - Before : 0;
  S.rate = static_cast<double>(S.blocks) / Us;
  S.steady = T.epoch_done.has_value() && !T.knobs_written && T.applied_at_start;
  S.alone = Alone;
  S.awaiting_sms = A.preempted && T.pending.has_value();
  S.epochs = ++T.epochs;
  const double Resident = static_cast<double>(S.sms) * S.ctas_per_sm;
  S.sampling_period_us = S.rate > 0 ? Resident / S.rate : 0;
  if (S.steady && Alone && S.sms > 0 && S.blocks > 0 && T.learned) {
    double &R = (*T.learned)[learnKey(S.sms, S.ctas_per_sm)];
    R = R > 0 ? R + LearnWeight * (S.rate - R) : S.rate;
  }
  S.isolated_rate = isolatedRate(T, S.sms, S.ctas_per_sm, S.isolated_source);
  S.np = S.isolated_rate > 0 ? S.rate / S.isolated_rate : 0;
  // Without a CTA curve the SM curve stands for any CTAs per SM in the
  // isolated rate; as a measure of the profile itself it holds only at
  // the occupancy it was timed at.
  const bool Timed = T.profile && (!T.profile->by_ctas.empty() ||
                                   S.ctas_per_sm == occupancyOf(T));
  S.profile_rate = Timed ? profileRate(T, S.sms, S.ctas_per_sm) : 0;
}

void Controller::epoch(double NowUs) {
  std::lock_guard<std::mutex> L(Mu);
  const double Us = NowUs - EpochStart;
  if (EpochStart >= 0 && !(Us > 0))
    return; // the clock did not move: nothing to measure
  const bool Opening = EpochStart < 0;
  const bool Alone = EpochPeak <= 1 && !EpochOpaque && HeldByOpaque.none();
  ReportKernels.clear();
  std::size_t N = 0;
  for (Tracked &T : Kernels) {
    readProgress(T);
    if (Opening || T.alloc.last_block_taken)
      continue; // no change of knobs can help it any more (SiM Sec. 3.2)
    if (Report.kernels.size() <= N)
      Report.kernels.emplace_back();
    measure(T, Report.kernels[N++], Us, Alone);
    ReportKernels.push_back(&T);
  }
  Report.kernels.resize(N);
  if (!Opening) {
    ++Report.index;
    Report.start_us = EpochStart;
    Report.end_us = NowUs;
  }
  // The next epoch opens here.
  for (Tracked &T : Kernels) {
    T.epoch_done = T.progress.done;
    T.knobs_written = false;
    // Still leaving SMs or waiting for some: the next epoch's rate does not
    // belong to one allocation.
    T.applied_at_start = T.releasing.none() && !T.pending && !T.fresh;
  }
  EpochStart = NowUs;
  EpochPeak = Kernels.size();
  EpochOpaque = HeldByOpaque.any();
  if (Opening)
    return;
  traceEpoch();
  runOnline();
  // SMs left to a stream's queued launch that has not arrived within a
  // whole epoch: other work holds it back (README, "Stream successors").
  if (SuccessorAwaitedSince && Report.index >= *SuccessorAwaitedSince + 2 &&
      (!Kernels.empty() || !Opaques.empty()))
    decideAndApply("departure", /*KeepOnlinePlan=*/true);
}

void Controller::traceEpoch() {
  if (!Opts.trace)
    return;
  if (!Opts.online && Report.end_us - LastTracedEpoch < Opts.trace_epoch_us)
    return;
  LastTracedEpoch = Report.end_us;
  nlohmann::json Ks = nlohmann::json::array();
  for (const EpochSample &S : Report.kernels)
    Ks.push_back({{"kernel", S.name},
                  {"kernel_id", S.id},
                  {"sms", S.sms},
                  {"ctas_per_sm", S.ctas_per_sm},
                  {"bypass_ctas_per_sm", S.bypass_ctas_per_sm},
                  {"preempted", S.preempted},
                  {"steady", S.steady},
                  {"alone", S.alone},
                  {"awaiting_sms", S.awaiting_sms},
                  {"blocks", S.blocks},
                  {"executed_blocks", S.done},
                  {"total_blocks", S.total},
                  {"rate", S.rate},
                  {"isolated_rate", S.isolated_rate},
                  {"isolated_source", isolatedSourceName(S.isolated_source)},
                  {"profile_rate", S.profile_rate},
                  {"np", S.np},
                  {"sampling_period_us", S.sampling_period_us}});
  Opts.trace->epoch(Report.index, Report.start_us, Report.end_us, Ks);
}

void Controller::runOnline() {
  if (!Opts.online || Report.kernels.empty())
    return;
  std::optional<Plan> P = Opts.online->onEpoch(Report, Last);
  if (!P)
    return;
  // Rewritten kernels are planned over the SMs no opaque partition holds.
  const int N = static_cast<int>(FreeIds.size());
  // Decisions apply by position: each must name the report's kernel there.
  bool Ok = P->kernels.size() == ReportKernels.size();
  for (std::size_t I = 0; Ok && I < P->kernels.size(); ++I) {
    const policy::KernelDecision &D = P->kernels[I];
    Ok = D.name == ReportKernels[I]->alloc.name && D.sms >= 0 &&
         D.sm_first >= 0 && D.sm_first + D.sms <= N;
  }
  const std::string Name(Opts.online->name());
  if (!Ok) {
    warnOnce("online:" + Name,
             "online policy " + Name +
                 " returned a plan that does not name each of the " +
                 std::to_string(ReportKernels.size()) +
                 " running kernels once, in the report's order, within the " +
                 std::to_string(N) + " SMs; keeping the current knobs");
    return;
  }
  if (P->policy.empty())
    P->policy = Name;
  P->num_sms = N;
  appendOpaque(*P);
  applyPlan(std::move(*P), ReportKernels, "epoch");
}

} // namespace smpart
