// Co-runs: several transformed kernels on one emulated GPU, driven through
// EmulatedKernel (a smpart::KernelControl) by an observer such as the real
// smpart::Controller, with libsmpart's notifications and the co-run checks.
#include "machine.hpp"

#include <algorithm>
#include <string>
#include <utility>

namespace smpart {
namespace emu {
namespace internal {
namespace {

Machine &machineOf(const std::shared_ptr<void> &p) {
  return *static_cast<Machine *>(p.get());
}

/// A host knob write, as KernelHandle does it (complete, under the lock).
void controlWrite(Machine &m, const KnobWrite &write) {
  fullWrite(m, write);
  m.co_report->host_writes.emplace_back(m.co->step, m.knobs);
}

/// The launch of a co-run's kernel at its arrival step.
void coLaunch(CoRun &co, Machine &m, const CoKernel &k) {
  m.arrived = true;
  m.co_report->arrived_step = co.step;
  launchTransformed(m, k.grid, k.block, k.body, k.dynamic_smem, nullptr);
}

} // namespace
} // namespace internal

// EmulatedKernel and runCoRun are written in terms of the internal parts.
using namespace internal;

EmulatedKernel::EmulatedKernel(std::shared_ptr<void> machine)
    : M(std::move(machine)) {}
unsigned long long EmulatedKernel::id() const { return machineOf(M).id; }
std::string EmulatedKernel::name() const { return machineOf(M).name; }
unsigned EmulatedKernel::occupancy() const {
  return machineOf(M).cfg.occupancy;
}
unsigned EmulatedKernel::index() const { return machineOf(M).index; }
Knobs EmulatedKernel::hostKnobs() const { return machineOf(M).knobs; }
Knobs EmulatedKernel::deviceKnobs() const {
  const Machine &m = machineOf(M);
  return m.published.empty() ? m.knobs : currentDeviceKnobs(m);
}

Status EmulatedKernel::setSmMask(const SmMask &mask) {
  Machine &m = machineOf(M);
  if (mask.none())
    return Status(Errc::kInvalidArgument,
                  "setSmMask on kernel " + m.name +
                      ": an empty mask leaves no SM to run on; use preempt()");
  controlWrite(m, [&](volatile Knobs &k) { detail::storeMask(k, mask); });
  ++m.report->mask_changes;
  return Status();
}
Status EmulatedKernel::setCtasPerSm(unsigned n) {
  Machine &m = machineOf(M);
  if (n == 0 || n > kMaxCtasPerSm)
    return Status(Errc::kInvalidArgument, "setCtasPerSm(" + std::to_string(n) +
                                              ") on kernel " + m.name);
  controlWrite(m, [&](volatile Knobs &k) { k.ctas_per_sm = n; });
  return Status();
}
Status EmulatedKernel::setBypassCtasPerSm(unsigned n) {
  Machine &m = machineOf(M);
  if (n > kMaxCtasPerSm)
    return Status(Errc::kInvalidArgument,
                  "setBypassCtasPerSm(" + std::to_string(n) + ")");
  controlWrite(m, [&](volatile Knobs &k) { k.bypass_ctas_per_sm = n; });
  return Status();
}
Status EmulatedKernel::preempt() {
  Machine &m = machineOf(M);
  m.host_preempted = true;
  controlWrite(m, [](volatile Knobs &k) { k.preempt = 1; });
  ++m.report->preemptions;
  return Status();
}
Status EmulatedKernel::setKnobs(const KnobSet &set) {
  Machine &m = machineOf(M);
  if (set.mask.none() || set.ctas_per_sm == 0 ||
      set.ctas_per_sm > kMaxCtasPerSm || set.bypass_ctas_per_sm > kMaxCtasPerSm)
    return Status(Errc::kInvalidArgument, "setKnobs on kernel " + m.name);
  if (set.preempt && !m.host_preempted)
    ++m.report->preemptions;
  if (detail::loadMask(m.knobs) != set.mask)
    ++m.report->mask_changes;
  m.host_preempted = set.preempt;
  controlWrite(m, [&](volatile Knobs &k) { detail::storeKnobSet(k, set); });
  return Status();
}
Status EmulatedKernel::resume() {
  Machine &m = machineOf(M);
  m.host_preempted = false;
  if (m.knobs.preempt) // as KernelHandle::resume: no second write
    controlWrite(m, [](volatile Knobs &k) { k.preempt = 0; });
  ++m.report->resumes;
  return grow();
}
Status EmulatedKernel::grow() {
  Machine &m = machineOf(M);
  if (m.host_preempted)
    return Status(Errc::kPreempted,
                  "grow on preempted kernel " + m.name + ": resume it");
  if (finished(m) || m.notices.last_block_taken)
    return Status();
  launchCtas(m, ctasToLaunch(m), false);
  ++m.report->grows;
  return Status();
}
bool EmulatedKernel::knobsApplied() const {
  const Machine &m = machineOf(M);
  return detail::knobsAppliedAt(m.notices, finished(m), m.knobs.epoch);
}
Status EmulatedKernel::progress(ControlProgress &out) const {
  const Machine &m = machineOf(M);
  out = ControlProgress{};
  out.total = m.ctl.total_blocks;
  out.finished = finished(m);
  out.taken = out.finished
                  ? out.total
                  : std::min<unsigned long long>(m.notices.taken, out.total);
  // As the controller's adapter of KernelHandle does (runtime_glue.cpp):
  // a CTA adds its finished blocks to `done` only when it leaves, and
  // persistent CTAs stay until the grid is done, so executed blocks are
  // read from the blocks taken, which lead them by the blocks in flight.
  out.done = out.finished
                 ? out.total
                 : std::max<unsigned long long>(m.notices.done, out.taken);
  return Status();
}

CoReport runCoRun(const std::vector<CoKernel> &kernels,
                  const CoConfig &config) {
  CoReport report;
  CoRun co;
  co.cfg = config;
  co.report = &report;
  co.rng.seed(config.seed * 0x2545f4914f6cdd1dull + 7);
  Config shape;
  shape.seed = config.seed;
  shape.num_sms = std::max(1u, config.num_sms);
  shape.id_span = config.id_span;
  const std::vector<unsigned> ids = smIds(shape);
  report.sm_ids = ids;
  report.kernels.resize(kernels.size());
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    auto m = std::make_shared<Machine>();
    m->cfg = shape;
    m->cfg.chaos = false;
    m->cfg.occupancy =
        std::max(1u, std::min(kernels[i].occupancy, kMaxCtasPerSm));
    m->rng.seed(config.seed * 0x9e3779b97f4a7c15ull + 1000 + i);
    m->ids = ids;
    m->hw_count.assign(shape.num_sms, 0);
    m->slot_moved.assign(kMaxSms, 0);
    m->co = &co;
    m->co_report = &report.kernels[i];
    m->report = &report.kernels[i].report;
    m->index = static_cast<unsigned>(i);
    m->id = i + 1;
    m->name = kernels[i].name;
    report.kernels[i].name = kernels[i].name;
    report.kernels[i].id = m->id;
    co.machines.push_back(std::move(m));
  }
  auto allOk = [&] {
    if (!report.ok)
      return false;
    for (const CoKernelReport &k : report.kernels)
      if (!k.report.ok) {
        report.ok = false;
        report.error = k.name + ": " + k.report.error;
        return false;
      }
    return true;
  };
  // Notifications, as libsmpart's notifier delivers them: the last block
  // (or completion) once, then completion once.
  auto notify = [&] {
    for (auto &mp : co.machines) {
      Machine &m = *mp;
      if (!m.arrived || m.ended)
        continue;
      const bool done = finished(m);
      if (!done &&
          detail::newlyApplied(m.knobs, m.launch_epoch, m.notices, done,
                               m.saw_applied_epoch) &&
          config.observer)
        config.observer->onKnobsApplied(m.id);
      if (!m.last_notified && (done || m.notices.last_block_taken)) {
        m.last_notified = true;
        m.co_report->last_block_step = co.step;
        if (config.observer)
          config.observer->onLastBlockTaken(m.id);
      }
      if (done && !m.done_notified) {
        m.done_notified = true;
        m.co_report->done_step = co.step;
        if (config.observer)
          config.observer->onDone(m.id);
      }
      if (m.done_notified && m.resident.empty() && m.pending.empty()) {
        m.ended = true; // every CTA gone: the per-launch final checks
        m.report->resident_at_end = 0;
        m.report->taken_at_end = m.state.next_block;
        m.report->outside_blocks = m.outside;
        m.report->stalls = m.notices.stalls;
        finalChecks(m);
      }
    }
  };

  while (allOk()) {
    ++co.step;
    report.steps = co.step;
    if (config.observer)
      config.observer->onStep(co.step);
    for (std::size_t i = 0; i < kernels.size(); ++i) {
      Machine &m = *co.machines[i];
      m.clock_ns += 200;
      if (!m.arrived && kernels[i].arrive_at_step < co.step) {
        coLaunch(co, m, kernels[i]);
        m.clock_ns = co.step * 200;
      }
    }
    if (!allOk())
      break;
    checkHostDisjoint(co);
    std::vector<std::pair<Machine *, std::size_t>> ready;
    bool all_ended = true;
    for (auto &mp : co.machines) {
      Machine &m = *mp;
      all_ended = all_ended && m.ended;
      if (!m.arrived || m.ended)
        continue;
      place(m);
      for (std::size_t c = 0; c < m.resident.size(); ++c)
        ready.emplace_back(&m, c);
    }
    if (all_ended)
      break;
    if (co.step > config.step_limit) {
      std::string what;
      for (auto &mp : co.machines)
        if (!mp->ended)
          what += " " + mp->name + ": " +
                  std::to_string(mp->state.blocks_done) + "/" +
                  std::to_string(mp->ctl.total_blocks) + " done, " +
                  std::to_string(mp->resident.size()) + " resident, preempt " +
                  std::to_string(mp->knobs.preempt) + ";";
      co.fail("stall: the co-run did not complete in " +
              std::to_string(config.step_limit) + " steps:" + what);
      break;
    }
    if (ready.empty())
      continue; // waiting for an arrival
    // One resident CTA of any kernel, drawn from the co-run's own stream.
    const auto [mp, i] =
        ready[static_cast<std::size_t>(co.rng() % ready.size())];
    ++mp->report->steps;
    stepCta(*mp, i); // a failure is in its report: allOk() sees it
    if (!allOk())
      break;
    notify();
  }
  allOk();
  for (auto &mp : co.machines)
    retireAll(*mp);
  return report;
}

} // namespace emu
} // namespace smpart
