// The protocol checks: every decision a CTA reports (decided()), every knob
// epoch the device publishes, the counters a finished launch leaves, and in
// co-runs that kernels stay on disjoint SMs. The hooks that track a CTA's
// slot for the checks (slotChanged, slotFreed, givesBack, recordLoad) are
// here too. See emulator.hpp for what each property means.
#include "machine.hpp"

#include "smpart/detail/emulation_hooks.hpp"

// For the layout of a CTA's protocol state (detail::Tail), which the checks
// read from the CTA's dynamic shared memory; device.cuh needs the CUDA
// built-ins of cuda_emu.hpp first.
#include "smpart_emu/cuda_emu.hpp"

#include "smpart/device.cuh"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace smpart {
namespace emu {
namespace internal {

const detail::Tail &Cta::tail() const {
  return *reinterpret_cast<const detail::Tail *>(smem.data() + smem.size() -
                                                 kTailBytes);
}

void notePublishedCo(Machine &m, const Knobs &d) {
  if (!m.co)
    return;
  CoPublish p{m.co->step, d.epoch, detail::loadMask(d), d.preempt != 0,
              d.ctas_per_sm};
  m.co_report->published.push_back(p);
}

/// A CTA of `m` on SM id `sm` took blocks [base, base+count) under device
/// epoch `epoch`, inside its allocation.
void coTake(Machine &m, const Cta &c, unsigned sm, unsigned epoch,
            unsigned count) {
  CoRun &co = *m.co;
  m.co_report->takes.push_back({co.step, sm, epoch, count});
  CoReport &r = *co.report;
  bool shared = false;
  for (const auto &op : co.machines) {
    const Machine &o = *op;
    if (&o == &m || !o.arrived || o.ended)
      continue;
    for (const auto &oc : o.resident)
      if (oc->working && o.ids[oc->sm] == sm)
        shared = true;
    if (!mayTake(o) || o.published.empty())
      continue;
    // Until its launch handshake publishes a copy at least as new as the
    // launch, none of o's CTAs takes a block (settle() waits), and the
    // copy it publishes then is the host's newest: the launch's knobs,
    // which stand for the device's until then, no longer say where o runs.
    if (static_cast<int>(o.state.knobs.epoch - o.launch_epoch) < 0 ||
        (o.state.knobs.epoch & 1u))
      continue;
    const Knobs &d = currentDeviceKnobs(o);
    if (d.preempt || !maskHas(d.sm_mask, sm))
      continue;
    ++r.overlap_takes;
    if (co.cfg.exclusive_sms)
      return co.fail("kernel " + m.name + " took blocks on SM " +
                     std::to_string(sm) + " (epoch " + std::to_string(epoch) +
                     ") while kernel " + o.name +
                     "'s current device knobs "
                     "(epoch " +
                     std::to_string(d.epoch) + ") allow it");
  }
  if (shared)
    ++r.shared_sm_takes;
  (void)c;
}

/// exclusive_sms: the host masks of the kernels that may still take blocks
/// and are not preempted on the host are pairwise disjoint.
void checkHostDisjoint(CoRun &co) {
  if (!co.cfg.exclusive_sms)
    return;
  ++co.report->host_disjoint_checks;
  for (std::size_t i = 0; i < co.machines.size(); ++i) {
    const Machine &a = *co.machines[i];
    if (!mayTake(a) || a.knobs.preempt)
      continue;
    for (std::size_t j = i + 1; j < co.machines.size(); ++j) {
      const Machine &b = *co.machines[j];
      if (!mayTake(b) || b.knobs.preempt)
        continue;
      for (unsigned w = 0; w < kMaskWords; ++w)
        if (a.knobs.sm_mask[w] & b.knobs.sm_mask[w])
          return co.fail("host masks of kernels " + a.name + " and " + b.name +
                         " overlap at step " + std::to_string(co.step) +
                         " (word " + std::to_string(w) + ")");
    }
  }
}

/// Called after every step of a CTA: a device knob epoch that just became
/// even is recorded, and must carry exactly what the host wrote under it
/// (a torn copy published as consistent would fail here).
void notePublished(Machine &m) {
  const std::uint32_t e = m.state.knobs.epoch;
  // 0: before the launch handshake; odd: what the handshake sets before
  // its first copy.
  if (e == 0 || (e & 1u) || m.published.count(e))
    return;
  Knobs d{};
  if (!detail::loadKnobImage(m.state.knobs.copy, d) || d.epoch != e)
    return m.fail("the device published knob epoch " + std::to_string(e) +
                  " over a copy that does not hold it whole");
  m.published[e] = d;
  notePublishedCo(m, d);
  const auto it = m.history.find(e);
  if (it == m.history.end())
    return m.fail("the device published knob epoch " + std::to_string(e) +
                  ", which the host never wrote");
  const Knobs &h = it->second;
  bool same = d.ctas_per_sm == h.ctas_per_sm &&
              d.bypass_ctas_per_sm == h.bypass_ctas_per_sm &&
              d.preempt == h.preempt &&
              d.chunk_target_ns == h.chunk_target_ns &&
              d.stall_grace_ns == h.stall_grace_ns;
  for (unsigned w = 0; w < kMaskWords; ++w)
    same = same && d.sm_mask[w] == h.sm_mask[w];
  if (!same)
    m.fail("the device published knob epoch " + std::to_string(e) +
           " with values that differ from the host's (torn copy)");
}

void finalChecks(Machine &m) {
  for (std::size_t b = 0; b < m.runs.size(); ++b)
    if (m.runs[b] != 1)
      return m.fail("logical block " + std::to_string(b) + " ran " +
                    std::to_string(m.runs[b]) + " times");
  if (m.state.blocks_done != m.ctl.total_blocks)
    return m.fail("blocks_done " + std::to_string(m.state.blocks_done) +
                  " != " + std::to_string(m.ctl.total_blocks));
  for (unsigned s = 0; s < kMaxSms; ++s) {
    if (m.state.sm_slots[s])
      return m.fail("SM id " + std::to_string(s) + " still has slots held");
    if (m.state.sm_tickets[s])
      return m.fail("SM id " + std::to_string(s) + " still has " +
                    std::to_string(m.state.sm_tickets[s]) +
                    " slot tickets out");
  }
  if (m.state.resident_ctas)
    return m.fail("resident_ctas not back to 0");
  if (m.state.first_live)
    return m.fail("first_live not back to 0");
  if (m.notices.finished != m.ctl.generation)
    return m.fail("the anchor never reported the kernel finished");
  if (!m.notices.last_block_taken)
    return m.fail("the last-block notification never fired");
  if (m.outside && !m.notices.stalls)
    return m.fail("blocks ran outside the allocation without a reported stall");
}

} // namespace internal
} // namespace emu

namespace detail {
namespace emulation {

namespace em = emu::internal;

void givesBack(const char *what) {
  em::Machine &m = *em::g_m;
  if (m.cta->unsynced)
    m.fail(std::string("thread 0 gave back ") + what +
           " before the barrier that completes its CTA's last block (other "
           "warps may still be storing in it)");
}

void slotChanged(int slot) {
  em::Machine &m = *em::g_m;
  em::Cta &c = *m.cta;
  if (c.slot >= 0 && slot != c.slot) // a hole opened on this SM
    m.slot_moved[smid()] = ++m.seq;
  c.freed = false;
  c.claiming = false;
  c.slot = slot;
  c.working = false; // until it takes blocks under the new slot
  c.tag = false;
}

void claimingSlot(bool claiming) { em::g_m->cta->claiming = claiming; }

void claimRetried() { ++em::g_m->report->claim_retries; }

void claimedPastTheGrid() { ++em::g_m->report->exhausted_claims; }

void slotFreed() {
  em::Cta &c = *em::g_m->cta;
  c.freed = true; // another CTA may claim c.slot now
  c.working = false;
  c.tag = false;
}

void recordLoad(bool bypass) {
  em::Machine &m = *em::g_m;
  ++m.report->loads;
  m.report->tagged_loads += bypass;
  if (m.transformed && bypass != m.cta->tag)
    m.fail("a load's bypass flag differs from its CTA's tag");
}

void claimed(unsigned sm, unsigned long long base, unsigned count,
             unsigned epoch) {
  em::Machine &m = *em::g_m;
  em::Cta &c = *m.cta;
  if (base >= m.ctl.total_blocks)
    return; // decided() will not take it
  c.claim_pending = true;
  c.claim_base = base;
  if (m.co)
    em::coTake(m, c, sm, epoch,
               static_cast<unsigned>(std::min<unsigned long long>(
                   count, m.ctl.total_blocks - base)));
}

void decided(unsigned sm, int slot, bool go, unsigned long long base,
             unsigned count, bool bypass, unsigned epoch, bool outside) {
  em::Machine &m = *em::g_m;
  em::Cta &c = *m.cta;
  if (std::getenv("SMPART_EMU_TRACE"))
    std::fprintf(stderr,
                 "%s t=%llu sm=%u slot=%d go=%d base=%llu n=%u epoch=%u "
                 "outside=%d host_epoch=%u dev_epoch=%u\n",
                 m.name.c_str(), m.clock_ns, sm, slot, go, base, count, epoch,
                 outside, m.knobs.epoch, m.state.knobs.epoch);
  if (sm != smid())
    return m.fail("decision names SM " + std::to_string(sm) +
                  " but the CTA runs on SM " + std::to_string(smid()));
  if (!go) {
    // Slots it held were released before (the final check finds leaks).
    if (c.slot >= 0)
      return m.fail("a CTA on SM " + std::to_string(sm) +
                    " leaves holding slot " + std::to_string(c.slot));
    c.working = false;
    c.tag = false;
    c.left = true;
    return;
  }
  ++m.report->chunks;
  const std::string where = "CTA on SM " + std::to_string(sm) + " slot " +
                            std::to_string(slot) + " (epoch " +
                            std::to_string(epoch) + ")";
  if (base + count > m.ctl.total_blocks || count == 0)
    return m.fail(where + " took blocks outside the grid");
  for (unsigned long long b = base; b < base + count; ++b)
    if (++m.runs[b] > 1)
      return m.fail("logical block " + std::to_string(b) + " taken twice");
  // Against the device's copy of the knobs under the epoch the CTA
  // decided under, as it was published.
  auto it = m.published.find(epoch);
  if (it == m.published.end())
    return m.fail(where + " decided under an epoch the device never published");
  const Knobs &k = it->second;
  if (k.preempt)
    return m.fail(where + " took blocks under preemption");
  if (outside) {
    ++m.outside;
    // Only the anchor: of the first instance, the last one counted out.
    bool anchor = c.ctl.first_instance && m.state.first_live == 0;
    for (const auto &o : m.resident)
      if (o.get() != &c && o->ctl.first_instance && !o->left)
        anchor = false;
    if (!anchor)
      return m.fail(where +
                    " ran outside its allocation but is not the anchor");
    if (c.slot >= 0)
      return m.fail(where + " ran outside its allocation holding a slot");
    // Its read of resident_ctas (the access before the take) saw none.
    if (c.resident_seen[0] != 0)
      return m.fail(where + " ran outside its allocation while " +
                    std::to_string(c.resident_seen[0]) + " CTAs held slots");
    if (!m.notices.stalls)
      return m.fail(where +
                    " ran outside its allocation with no stall reported");
    c.working = false;
    c.tag = false;
    if (bypass)
      return m.fail(where + " is tagged outside its allocation");
    // A co-run counts it among the kernel's takes; a reported stall is
    // outside every allocation by design, so no exclusivity check.
    if (m.co)
      m.co_report->takes.push_back({m.co->step, sm, epoch, count});
    return;
  }
  if (!((k.sm_mask[sm / 32] >> (sm % 32)) & 1u))
    return m.fail(where + " took blocks while its SM is outside the mask");
  if (slot < 0 || static_cast<unsigned>(slot) >= k.ctas_per_sm)
    return m.fail(where + " took blocks with the target at " +
                  std::to_string(k.ctas_per_sm) + " CTAs per SM");
  if (slot != c.slot)
    return m.fail(where + " but its last slot change named slot " +
                  std::to_string(c.slot));
  if (!((m.state.sm_slots[sm] >> slot) & 1u))
    return m.fail(where + ": slot bit not set in the SM's slot word");
  for (const auto &o : m.resident)
    if (o.get() != &c && o->sm == c.sm && o->slot == slot && !o->freed)
      return m.fail(where + " shared with another CTA");
  const bool claimed = c.claim_pending && c.claim_base == base;
  if (claimed)
    c.claim_pending = false;
  else if (m.co)
    em::coTake(m, c, sm, epoch, count);
  if (bypass != (static_cast<unsigned>(slot) < k.bypass_ctas_per_sm))
    return m.fail(where + ": bypass tag does not follow the slot");
  c.working = true;
  c.tag = bypass;
  c.decided_seq = ++m.seq;
  c.decided_epoch = epoch;
  c.decided_slot_epoch = c.tail().slot_epoch;

  // Once the SM has settled (every CTA holding a slot on it took its last
  // chunk under this epoch, after the last slot release anywhere that it
  // has acted on and after the last hole opened on this SM), slots are
  // dense: exactly min(bypass, CTAs) CTAs are tagged. Not under an epoch
  // the device has replaced: a chunk claimed ahead under it is still run
  // (decide()) by a CTA that is on its way out of its slot.
  if (epoch != m.state.knobs.epoch)
    return;
  const unsigned slot_epoch = m.state.knobs.slot_epoch;
  unsigned holders = 0, tagged = 0, word = 0;
  for (const auto &o : m.resident) {
    if (o->sm != c.sm)
      continue;
    if (o->claiming) // its slot may be below one already held
      return;
    if (o->slot < 0)
      continue;
    if (!o->working || o->decided_epoch != epoch ||
        o->decided_slot_epoch != slot_epoch ||
        o->decided_seq < m.slot_moved[sm])
      return;
    ++holders;
    tagged += o->tag;
    word |= 1u << o->slot;
  }
  ++m.report->bypass_checks;
  const unsigned want = std::min(k.bypass_ctas_per_sm, holders);
  if (tagged != want || word != detail::lowBits(holders))
    return m.fail("settled SM " + std::to_string(sm) + " (epoch " +
                  std::to_string(epoch) + "): " + std::to_string(holders) +
                  " CTAs in slots 0x" +
                  [&] {
                    char b[16];
                    std::snprintf(b, sizeof b, "%x", word);
                    return std::string(b);
                  }() +
                  ", " + std::to_string(tagged) + " tagged, want " +
                  std::to_string(want) + " (bypass " +
                  std::to_string(k.bypass_ctas_per_sm) + ")");
}

} // namespace emulation
} // namespace detail
} // namespace smpart
