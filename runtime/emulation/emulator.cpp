// CPU emulation of transformed kernels (test support). See emulator.hpp,
// and machine.hpp for how the emulator is split into parts.
//
// This file holds the single-kernel runs and the device hooks that yield
// or read the emulated GPU. The scheduler runs one CTA at a time from one
// yield point to the next and may turn knobs between any two: CTAs
// interleave inside the protocol, as on a GPU, while only one CTA at a
// time is inside a user's block body (switches happen at block boundaries
// and at protocol steps, where the other threads of the CTA wait at a
// barrier), which keeps `__shared__` as static storage and unlocked atomics
// correct. Every schedule is a pure function of the seed.
#include "machine.hpp"

#include "smpart/detail/emulation_hooks.hpp"

#include <algorithm>
#include <memory>
#include <string>

namespace smpart {
namespace emu {

using namespace internal;

Report runOriginal(dim3 grid, dim3 block, const OriginalBody &body,
                   std::size_t dynamic_smem) {
  Report report;
  Machine m;
  m.block = block;
  m.threads = block.x * block.y * block.z;
  m.original = &body;
  m.report = &report;
  m.smem_bytes = dynamic_smem + 16;
  const CurrentMachine current(m);
  for (unsigned z = 0; z < grid.z && report.ok; ++z)
    for (unsigned y = 0; y < grid.y && report.ok; ++y)
      for (unsigned x = 0; x < grid.x && report.ok; ++x) {
        std::unique_ptr<Cta> c = makeCta(m, make_uint3(x, y, z), grid);
        const Wait w = runCta(m, *c);
        if (w == Wait::kBoundary || w == Wait::kStep)
          m.fail("original kernel reached the persistent-block protocol");
        retire(*c);
        ++report.ctas;
      }
  return report;
}

namespace {

/// Report::ack_after_clean_ns: when the device's epoch that the host has
/// not seen acknowledged stops forbidding every held slot, and the
/// acknowledgement after that.
void noteAckLatency(Machine &m) {
  if (m.notices.acked_epoch != m.seen_acked_epoch) {
    m.seen_acked_epoch = m.notices.acked_epoch;
    m.report->ack_after_clean_ns =
        m.clean_since_ns ? m.clock_ns - m.clean_since_ns : 0;
    m.clean_since_ns = 0;
    return;
  }
  if (m.published.empty() || m.notices.acked_epoch == m.state.knobs.epoch) {
    m.clean_since_ns = 0;
    return;
  }
  const Knobs &d = currentDeviceKnobs(m);
  const std::uint32_t slots =
      d.ctas_per_sm >= 32 ? ~0u : (1u << d.ctas_per_sm) - 1u;
  for (unsigned i = 0; i < m.cfg.num_sms; ++i) {
    const unsigned id = m.ids.empty() ? i : m.ids[i];
    const std::uint32_t allowed =
        d.preempt || !maskHas(d.sm_mask, id) ? 0u : slots;
    if (m.state.sm_slots[id] & ~allowed) {
      m.clean_since_ns = 0;
      return;
    }
  }
  if (!m.clean_since_ns)
    m.clean_since_ns = m.clock_ns;
}

} // namespace

Report runTransformed(dim3 grid, dim3 block, const TransformedBody &body,
                      const Config &config) {
  Report report;
  Machine m;
  m.cfg = config;
  m.cfg.occupancy = std::max(1u, std::min(config.occupancy, kMaxCtasPerSm));
  m.knobs.epoch = config.previous_knob_epoch;
  m.rng.seed(config.seed);
  m.report = &report;
  m.hw_count.assign(m.cfg.num_sms, 0);
  m.ids = smIds(m.cfg);
  m.slot_moved.assign(kMaxSms, 0);
  const CurrentMachine current(m);
  SmMask confined;
  const bool confine = config.chaos && m.uniform() < 0.5; // sometimes
  if (confine)
    confined = randomMask(m);
  launchTransformed(m, grid, block, body, config.dynamic_smem,
                    confine ? &confined : nullptr);
  if (config.chaos && m.uniform() < 0.3) // a knob write before any CTA ran
    knobAction(m);

  // Chaos for a while, then the controller settles: the last write is
  // completed and preemption cleared, and nothing more is launched. The
  // kernel must then finish with the CTAs it has.
  const unsigned long long chaos_steps =
      config.chaos
          ? 200 + m.pick(static_cast<unsigned>(40 * m.ctl.total_blocks + 1))
          : 0;
  const unsigned long long limit = chaos_steps + 400000;
  while (report.ok) {
    place(m);
    if (m.resident.empty() && m.pending.empty())
      break;
    ++report.steps;
    m.clock_ns += m.cfg.step_ns; // at 200: a poll every 20 steps at most,
                                 // the stall grace in 1000
    for (const auto &[at, write] : config.script)
      if (report.steps == at)
        fullWrite(m, write);
    if (report.steps == chaos_steps + 1 && config.settle) {
      closeWrite(m);
      if (m.knobs.preempt)
        fullWrite(m, [](volatile Knobs &k) { k.preempt = 0; });
    }
    if (report.steps > limit) {
      m.fail("stall: no completion " + std::to_string(limit - chaos_steps) +
             " steps after the controller stopped (" +
             std::to_string(m.state.blocks_done) + " of " +
             std::to_string(m.ctl.total_blocks) + " blocks counted, " +
             std::to_string(m.resident.size()) + " CTAs resident, " +
             std::to_string(m.pending.size()) + " pending, next_block " +
             std::to_string(m.state.next_block) + ")");
      break;
    }
    if (report.steps <= chaos_steps && m.uniform() < config.knob_rate) {
      knobAction(m);
      continue;
    }
    if (m.resident.empty())
      continue; // pending CTAs wait for room
    if (!stepCta(m, m.pick(static_cast<unsigned>(m.resident.size()))))
      break;
    noteAckLatency(m);
  }
  report.stalls = m.notices.stalls;
  report.strong_fetches = m.notices.strong_fetches;
  report.acked_last_write = m.notices.acked_epoch == m.knobs.epoch;
  report.resident_at_end = static_cast<unsigned>(m.resident.size());
  report.taken_at_end = m.state.next_block;
  report.outside_blocks = m.outside;
  if (report.ok)
    finalChecks(m);
  retireAll(m);
  return report;
}

} // namespace emu

namespace detail {
namespace emulation {

// Each hook acts on the launch whose CTA is running (internal::g_m).
namespace em = emu::internal;

unsigned smid() {
  return em::g_m->ids.empty() ? em::g_m->cta->sm
                              : em::g_m->ids[em::g_m->cta->sm];
}

unsigned smIdBound() {
  const em::Machine &m = *em::g_m;
  if (m.ids.empty())
    return m.cfg.num_sms;
  return *std::max_element(m.ids.begin(), m.ids.end()) + 1;
}

void blockBoundary() {
  if (!em::g_m->transformed) {
    em::g_m->fail("blockBoundary() in an original kernel");
    return;
  }
  em::Cta &c = *em::g_m->cta;
  if (c.working) // this thread ended a logical block
    c.unsynced = true;
  em::yieldFiber(em::Wait::kBoundary);
}

void step() {
  if (!em::g_m->transformed) {
    em::g_m->fail("a protocol step in an original kernel");
    return;
  }
  em::yieldFiber(em::Wait::kStep);
  em::Cta &c = *em::g_m->cta;
  c.resident_seen[0] = c.resident_seen[1];
  c.resident_seen[1] = em::g_m->state.resident_ctas;
}

void fetchHostImageWeak(const KnobImage *src, unsigned long long *stage) {
  em::Machine &m = *em::g_m;
  if (m.cfg.cached_host_reads && !m.cached_image) {
    m.cached_image.emplace();
    for (unsigned w = 0; w < kKnobImageWords; ++w)
      m.cached_image->word[w] = src->word[w];
  }
  m.clock_ns += m.cfg.host_read_ns; // the PCIe round trip
  // Vector by vector, so that a host write may land between two of them.
  const KnobImage *from = m.cached_image ? &*m.cached_image : src;
  for (unsigned w = 0; w < kKnobImageWords; w += 2) {
    step();
    stage[w] = from->word[w];
    stage[w + 1] = from->word[w + 1];
  }
}

unsigned long long globalTimerNs() {
  const unsigned long long step = em::g_m->cfg.timer_resolution_ns;
  const unsigned long long t = em::g_m->clock_ns;
  return step ? t / step * step : t;
}

void *dynamicSmem() { return em::g_m->cta->smem.data(); }
unsigned dynamicSmemSize() {
  return static_cast<unsigned>(em::g_m->cta->smem.size());
}

} // namespace emulation
} // namespace detail
} // namespace smpart
