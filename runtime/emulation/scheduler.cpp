// The launch and the scheduler step shared by single runs (runTransformed)
// and co-runs (runCoRun): how a transformed kernel is launched, where the
// hardware puts its CTAs, and one step of one resident CTA.
#include "machine.hpp"

#include <algorithm>
#include <utility>

namespace smpart {
namespace emu {
namespace internal {

std::vector<unsigned> smIds(const Config &c) {
  std::vector<unsigned> ids(c.num_sms);
  if (c.id_span) { // distinct ids drawn from [0, id_span), in order
    const unsigned span = std::min(kMaxSms, std::max(c.id_span, c.num_sms));
    std::mt19937_64 rng(c.seed * 0x9e3779b97f4a7c15ull + 1);
    std::vector<unsigned> all(span);
    for (unsigned i = 0; i < span; ++i)
      all[i] = i;
    for (unsigned i = 0; i < c.num_sms; ++i)
      std::swap(all[i], all[i + rng() % (span - i)]);
    all.resize(c.num_sms);
    std::sort(all.begin(), all.end());
    return all;
  }
  for (unsigned i = 0; i < c.num_sms; ++i)
    ids[i] =
        c.sparse_ids ? std::min(kMaxSms - 1, i * c.id_stride + c.id_offset) : i;
  return ids;
}

void launchCtas(Machine &m, unsigned long long ctas, bool first) {
  const dim3 grid(static_cast<unsigned>(ctas));
  for (unsigned long long i = 0; i < ctas; ++i) {
    std::unique_ptr<Cta> c =
        makeCta(m, make_uint3(static_cast<unsigned>(i), 0, 0), grid);
    c->ctl = m.ctl;
    c->ctl.first_instance = first ? 1u : 0u;
    c->ctl.min_epoch = m.knobs.epoch; // as Kernel::control()
    m.pending.push_back(std::move(c));
  }
  m.report->ctas += ctas;
}

unsigned long long ctasToLaunch(const Machine &m) {
  // Whether the mask spans the whole GPU. A co-run's launches take
  // Kernel::ctasToLaunch's view (every mask bit set), as EmulatedKernel
  // does for a controller's grow; the single-run scheduler counts a mask
  // over every SM id of its emulated GPU as whole.
  bool all_sms;
  if (m.co) {
    all_sms = detail::loadMask(m.knobs).all();
  } else {
    SmMask all;
    for (unsigned id : m.ids)
      all.set(id);
    all_sms = (detail::loadMask(m.knobs) & all) == all;
  }
  return detail::physicalCtas(m.cfg.num_sms, m.cfg.occupancy,
                              m.knobs.ctas_per_sm, all_sms, m.ctl.total_blocks);
}

void launchTransformed(Machine &m, dim3 grid, dim3 block,
                       const TransformedBody &body, std::size_t dynamic_smem,
                       const SmMask *confined) {
  m.block = block;
  m.threads = block.x * block.y * block.z;
  m.transformed = &body;
  m.smem_bytes = ((dynamic_smem + 15) & ~std::size_t{15}) + kTailBytes;
  // Fresh knobs, as libsmpart's launchTransformedSteps writes them.
  m.launch_epoch = detail::nextKnobEpoch(m.knobs.epoch);
  detail::initKnobs(m.knobs, m.cfg.occupancy, m.launch_epoch);
  m.knobs.stall_grace_ns = 20000;
  if (confined)
    detail::storeMask(m.knobs, *confined);
  m.history[m.knobs.epoch] = m.knobs;
  detail::storeKnobImage(m.image, m.knobs);
  m.ctl.knobs = &m.image;
  m.ctl.state = &m.state;
  m.ctl.notices = &m.notices;
  detail::setLogicalGrid(m.ctl, grid.x, grid.y, grid.z);
  m.ctl.generation = 1;
  m.runs.assign(m.ctl.total_blocks, 0);
  // A co-run's observer hears of the launch before its CTAs are counted
  // and enqueued, so the knobs the controller writes now apply to them.
  if (m.co && m.co->cfg.observer)
    m.co->cfg.observer->onLaunch(std::make_shared<EmulatedKernel>(
        std::shared_ptr<void>(m.co->machines[m.index])));
  const unsigned long long first = ctasToLaunch(m);
  // The State starts zero, as a slot's first launch copies it; the first
  // CTA initialises it (the launch handshake). Until then, what the first
  // CTA will publish is at least these knobs.
  m.ctl.first_ctas = static_cast<unsigned>(first);
  m.published[m.knobs.epoch] = m.knobs;
  notePublishedCo(m, m.knobs);
  launchCtas(m, first, true);
}

void place(Machine &m) {
  // Pending CTAs, in order, go to a random SM with room.
  while (!m.pending.empty()) {
    std::vector<unsigned> room;
    for (unsigned s = 0; s < m.cfg.num_sms; ++s)
      if (m.hw_count[s] < m.cfg.occupancy)
        room.push_back(s);
    if (room.empty())
      return;
    std::unique_ptr<Cta> c = std::move(m.pending.front());
    m.pending.erase(m.pending.begin());
    c->sm = room[m.pick(static_cast<unsigned>(room.size()))];
    ++m.hw_count[c->sm];
    m.resident.push_back(std::move(c));
  }
}

bool stepCta(Machine &m, std::size_t i) {
  const CurrentMachine current(m);
  Cta &c = *m.resident[i];
  for (unsigned t = 0; t < c.n; ++t)
    if (c.fibers[t].wait == Wait::kBoundary || c.fibers[t].wait == Wait::kStep)
      c.fibers[t].wait = Wait::kReady;
  const Wait w = runCta(m, c);
  if (w == Wait::kReady)
    return false; // the failure is in m's report
  notePublished(m);
  if (w == Wait::kDone) { // its SM has room for another CTA
    --m.hw_count[c.sm];
    retire(c);
    m.resident[i] = std::move(m.resident.back());
    m.resident.pop_back();
  }
  return true;
}

void retireAll(Machine &m) {
  for (auto &c : m.resident)
    retire(*c);
  for (auto &c : m.pending)
    retire(*c);
  m.resident.clear();
  m.pending.clear();
}

} // namespace internal
} // namespace emu
} // namespace smpart
