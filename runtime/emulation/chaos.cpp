// Host knob writes, and the random controller of single runs: knob changes,
// preemption, resumes and grows at random moments, with writes sometimes
// left half done so that the device meets a write in progress.
#include "machine.hpp"

#include <iterator>

namespace smpart {
namespace emu {
namespace internal {
namespace {

/// A host knob write, as KernelHandle does it (detail::writeKnobs).
/// Sometimes only the first words of the image are written until a later
/// step, so that the device meets a write in progress.
void hostWrite(Machine &m, const KnobWrite &write) {
  if (m.write_from < kKnobImageWords)
    return;
  const Knobs before = m.knobs;
  detail::writeKnobs(m.knobs, m.image, write);
  m.history[m.knobs.epoch] = m.knobs;
  if (m.cfg.chaos && m.uniform() < 0.3) {
    // Undo the tail of the image: it still holds the previous set.
    m.write_from = 1 + m.pick(kKnobImageWords - 1);
    detail::storeKnobImage(m.image, before, m.write_from);
  }
}

} // namespace

void closeWrite(Machine &m) {
  if (m.write_from >= kKnobImageWords)
    return;
  detail::storeKnobImage(m.image, m.knobs, m.write_from);
  m.write_from = kKnobImageWords;
}

void fullWrite(Machine &m, const KnobWrite &write) {
  closeWrite(m);
  detail::writeKnobs(m.knobs, m.image, write);
  m.history[m.knobs.epoch] = m.knobs;
}

SmMask randomMask(Machine &m) {
  SmMask mask;
  if (m.uniform() < 0.3) {
    for (unsigned id : m.ids)
      mask.set(id);
    return mask;
  }
  for (unsigned id : m.ids)
    if (m.uniform() < 0.6)
      mask.set(id);
  if (mask.none()) // the runtime refuses an empty mask
    mask.set(m.ids[m.pick(static_cast<unsigned>(m.ids.size()))]);
  return mask;
}

void knobAction(Machine &m) {
  Report &r = *m.report;
  if (m.write_from < kKnobImageWords && m.uniform() < 0.5)
    return closeWrite(m);
  switch (m.pick(7)) {
  case 0: {
    const SmMask mask = randomMask(m);
    hostWrite(m, [&](volatile Knobs &k) { detail::storeMask(k, mask); });
    ++r.mask_changes;
    break;
  }
  case 1: {
    const unsigned n = 1 + m.pick(m.cfg.occupancy);
    hostWrite(m, [&](volatile Knobs &k) { k.ctas_per_sm = n; });
    break;
  }
  case 2: {
    const unsigned n = m.pick(m.cfg.occupancy + 1);
    hostWrite(m, [&](volatile Knobs &k) { k.bypass_ctas_per_sm = n; });
    break;
  }
  case 3:
    if (!m.knobs.preempt) {
      hostWrite(m, [](volatile Knobs &k) { k.preempt = 1; });
      ++r.preemptions;
    }
    break;
  case 4: // resume: the anchor goes on; sometimes new CTAs as well
    if (m.knobs.preempt) {
      hostWrite(m, [](volatile Knobs &k) { k.preempt = 0; });
      if (m.uniform() < 0.5)
        launchCtas(m, ctasToLaunch(m), false);
      ++r.resumes;
    }
    break;
  case 5: // grow while blocks remain to take
    if (!m.knobs.preempt && !m.notices.last_block_taken &&
        m.pending.size() < m.cfg.num_sms * m.cfg.occupancy) {
      launchCtas(m, 1 + m.pick(m.cfg.num_sms * m.cfg.occupancy), false);
      ++r.grows;
    }
    break;
  case 6: {
    const unsigned ns = m.pick(4) * 2000;
    hostWrite(m, [&](volatile Knobs &k) { k.chunk_target_ns = ns; });
    break;
  }
  }
}

} // namespace internal
} // namespace emu
} // namespace smpart
