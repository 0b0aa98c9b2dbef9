// The persistent-block protocol: what thread 0 of a transformed CTA does
// between chunks of logical blocks (take a chunk, poll and publish the
// host's knobs, acknowledge them, give back its slot, park as the anchor).
// The CTA loop that calls it is smpart::detail::BasicCta (device.cuh); the
// protocol's ordering, cost and liveness arguments are in runtime/README.md.
#pragma once

#include "smpart/detail/device_primitives.cuh"

namespace smpart {
namespace detail {

/// Longest back-off (ns) of the parked anchor between two polls.
inline constexpr unsigned kParkMaxSleepNs = 16000;

// ---- What thread 0 shares with the CTA ------------------------------------

/// kSettle: thread 0 finishes this decision after the chunk's barrier,
/// because it gives something back (its slot, its finished blocks, its place
/// among the first instance's CTAs), which it may do only once every
/// thread of the CTA is past the last block (see Protocol::settle).
enum : unsigned { kGo = 1u, kBypass = 2u, kSettle = 4u };
enum : unsigned {
  kFirst = 1u,
  kAnchor = 2u,
  kStalled = 4u,
  kStale = 8u,
  kHasChunk = 16u,
  kGridTaken = 32u ///< a claim found every block taken: none will succeed
};

/// A chunk decision: logical blocks [base, base + count), flags kGo/kBypass.
struct alignas(16) ChunkDecision {
  unsigned long long base;
  unsigned count;
  unsigned flags;
};

/// The last bytes of the dynamic shared memory of a transformed CTA.
/// Double-buffered decisions let thread 0 write the next chunk before the
/// barrier that ends the current one. The rest is thread 0's protocol
/// state, kept here rather than in registers that would stay live across
/// the user's code.
struct alignas(16) Tail {
  ChunkDecision chunk[2];
  unsigned block[3]; ///< current logical block, for device functions
  unsigned pad;
  unsigned grid[4]; ///< logical grid
  // Thread 0 only.
  unsigned sm;
  int slot;       ///< slot held on `sm`, -1 if none
  unsigned epoch; ///< device knob epoch of the cached values below
  unsigned slot_epoch;
  unsigned allowed, bypass, mask_word, preempt;
  unsigned k, target_ns, grace_ns, flags;
  unsigned long long chunk_start_ns, local_done;
  /// The next chunk, claimed with the current one: [reserve, reserve +
  /// reserve_count), none if reserve_count is 0.
  unsigned long long reserve;
  unsigned reserve_count, pad2;
  /// Where the polling CTA lands the host's knob image (fetchHostImage).
  unsigned long long stage[kKnobImageWords];
};
static_assert(sizeof(Tail) == kTailBytes, "Tail layout");

__device__ __forceinline__ Tail &tail() {
  return *reinterpret_cast<Tail *>(dynamicSmemEnd() - kTailBytes);
}

__device__ __forceinline__ bool isThreadZero() {
  return threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0;
}

/// Bits [0, n) set; n >= 32 gives all bits.
__device__ __forceinline__ unsigned lowBits(unsigned n) {
  return n >= 32u ? 0xffffffffu : ((1u << n) - 1u);
}

// ---- The protocol (thread 0 only) -----------------------------------------

class Protocol {
public:
  __device__ Protocol(const LaunchControl &ctl, Tail &t) : c_(ctl), t_(t) {}

  /// First decision of the CTA: initialise the tail.
  __device__ void start() {
    t_.grid[0] = c_.grid_x;
    t_.grid[1] = c_.grid_y;
    t_.grid[2] = c_.grid_z;
    t_.grid[3] = 0;
    t_.block[0] = t_.block[1] = t_.block[2] = 0;
    t_.sm = smid();
    t_.slot = -1;
    t_.epoch = 1u; // odd: never a published epoch, forces a first read
    t_.slot_epoch = 0;
    t_.allowed = t_.bypass = t_.mask_word = t_.preempt = 0;
    t_.k = 1;
    t_.target_ns = t_.grace_ns = 0;
    t_.flags = c_.first_instance ? kFirst : 0u;
    t_.reserve_count = 0;
    t_.chunk_start_ns = globalTimerNs();
    t_.local_done = 0;
    if (!handshake())
      t_.flags = kStale;
  }

  /// Decides, before the barrier that ends the current chunk, the CTA's
  /// next chunk into t.chunk[out] if the CTA keeps its slot; anything that
  /// gives something back is left to settle() (kSettle). Nothing here makes
  /// the chunk's blocks count as done: other warps may still be storing in
  /// its last block.
  ///
  /// When chunks hold more than one block, every other chunk needs no
  /// atomic: the block counter's atomic claims two chunks, and the second
  /// one waits in the tail (reserve). Chunks of one block (blocks of 6 us
  /// and more) reserve nothing: the reserve would double the time a
  /// preempted CTA takes to leave, to save an L2 round trip that is small
  /// beside such a block. A chunk
  /// claimed before the knobs moved is never given back (the counter only
  /// grows): the CTA runs it under the knobs it was claimed under, still
  /// holding its slot, so the acknowledgement of the new knobs waits for
  /// it, and settles after it. That is one chunk more, at most, before a
  /// CTA leaves on preemption or an SM move.
  __device__ void decide(unsigned out) {
    ChunkDecision &d = t_.chunk[out];
    d = ChunkDecision{0, 0, 0};
    if (t_.flags & kStale)
      return;
    const unsigned long long now = globalTimerNs();
    if (t_.flags & kHasChunk) {
      t_.local_done += t_.chunk[out ^ 1u].count;
      adaptChunk(now);
    }
    const KnobHead h = knobHead(now);
    const unsigned epoch = t_.epoch, bypass = t_.bypass; // the reserve's
    if (keepsSlot(h)) {
      if (t_.reserve_count ? useReserve(d, now, tagUnder(t_.bypass), t_.epoch)
                           : take(d, now, false, t_.k > 1))
        return;
    } else if (t_.reserve_count) {
      useReserve(d, now, tagUnder(bypass), epoch);
      // The knobs just read do not allow the slot, and keepsSlot() trusts
      // knobs it has cached: read them again at the next decision (odd:
      // never read), which then settles, unless they allow it again.
      t_.epoch = 1u;
      return;
    }
    d.flags = kSettle;
  }

  /// Decides after the chunk's barrier, when every thread is done with
  /// the blocks this CTA took: may release the slot, count the finished
  /// blocks, leave, or park as the anchor. Also the CTA's first decision.
  __device__ void settle(unsigned out) {
    ChunkDecision &d = t_.chunk[out];
    d = ChunkDecision{0, 0, 0};
    if (t_.flags & kStale)
      return;
    const unsigned long long now = globalTimerNs();
    // A CTA whose knobs take its slot away (decide() read them) gives the
    // slot back before any poll: the acknowledgement waits for the slot,
    // and should not wait for this CTA's PCIe round trip as well.
    KnobHead h = t_.slot >= 0 && (t_.preempt || !inMask() ||
                                  static_cast<unsigned>(t_.slot) >= t_.allowed)
                     ? loadKnobHead(&c_.state->knobs)
                     : knobHead(now);
    while (static_cast<int>(h.epoch - c_.min_epoch) < 0) {
      // The device copy is older than what the host had written when this
      // instance was launched: bring it up to date first (one poll that
      // reads the host, a PCIe round trip, whenever the last read was;
      // this CTA has no slot and no block yet).
      if (!pollIfDue(globalTimerNs(), h, true))
        pauseNs(200);
      h = loadKnobHead(&c_.state->knobs);
    }
    refreshIfChanged(h, true);
    // A slot claim that raced with a publish gave the slot back (claimSlot),
    // or the device copy was being rewritten: decide again under the new
    // knobs, a few times at most.
    for (unsigned i = 0; i < 8 && (t_.epoch & 1u); ++i) {
      pauseNs(200);
      h = loadKnobHead(&c_.state->knobs);
      refreshIfChanged(h);
    }
    if (t_.slot >= 0 && take(d, now, false))
      return;
    leave(d);
  }

private:
  __device__ DeviceKnobs &knobs() const { return c_.state->knobs; }

  /// The launch handshake: one acquire load per CTA. The first CTA of a
  /// launch (the one that moves State::handshake to its generation)
  /// initialises the State while the others wait for it, a few
  /// microseconds at kernel start; it is resident and needs nothing from
  /// them. False for a CTA of an older launch (its control block went on;
  /// the runtime prevents this, the check makes it safe by construction).
  __device__ bool handshake() {
    unsigned long long *hs = &c_.state->handshake;
    const unsigned long long mine =
        static_cast<unsigned long long>(c_.generation) << 1;
    unsigned long long h = loadAcquire(hs);
    if (h == (mine | 1u))
      return true;
    if (static_cast<int>(static_cast<unsigned>(h >> 1) - c_.generation) > 0)
      return false;
    if (h >> 1 != c_.generation) {
      protocolStep();
      if (atomicCAS(hs, h, mine) == h) {
        initialise();
        __threadfence();
        protocolStep();
        atomicExch(hs, mine | 1u);
        return true;
      }
    }
    do {
      pauseNs(100);
      h = loadAcquire(hs);
    } while (h == mine);
    return h == (mine | 1u);
  }

  /// The winner of the handshake sets up the State: counters, and the
  /// device knobs from the host's image. `started` goes out first, behind
  /// a system fence, then the image is read: a host that wrote knobs and
  /// then, after its own fence, still reads started == 0 knows this read
  /// sees its write, so every CTA starts under it (KernelHandle::
  /// knobsApplied relies on it). The image is read until whole: a host
  /// write caught half way is a few stores from done. Every other CTA of
  /// the launch waits for this (about 6 us on an H200, most of it the
  /// system fence and the PCIe round trip), so nothing else goes here: the
  /// copy is published without the fences that protect concurrent readers
  /// (there are none yet), and the next poll is due a poll interval later,
  /// not at once (the image was just read).
  __device__ void initialise() {
    State &st = *c_.state;
    st.next_block = 0;
    st.blocks_done = 0;
    st.resident_ctas = 0;
    st.first_live = c_.first_ctas;
    volatile DeviceKnobs &dk = st.knobs;
    dk.slot_epoch = 0;
    dk.last_poll_ns = 0;
    dk.poll_lock = 0;
    dk.acked_epoch = 0;
    dk.ack_scan_word = 0;
    dk.strong_fetches = 0; // this launch's, as Notices reports them
    if (c_.notices) {
      protocolStep();
      c_.notices->started = 1u;
      fenceSystem();
    }
    // Older than the host's epoch when this launch was made (epochs rise
    // across a slot's launches and wrap; compared as signed differences,
    // 0 would be newer than half of them), and odd: never a published
    // epoch. The copy below publishes; no other CTA reads this meanwhile.
    dk.epoch = c_.min_epoch - 1u;
    while (!copyHostKnobs(true))
      pauseNs(200);
    dk.last_read_ns = dk.last_poll_ns = globalTimerNs();
  }

  /// The device knob head, after a poll of the host if one is due and
  /// blocks are left to take. Once the grid is all taken, a poll (a scan
  /// step of the acknowledgement, and a PCIe round trip once per poll
  /// interval) would only delay a CTA on its way out, maybe the kernel's
  /// last one; the parked anchor still polls, and so does settle() while
  /// the device knobs are older than the launch.
  __device__ KnobHead knobHead(unsigned long long now) {
    const KnobHead h = loadKnobHead(&knobs());
    if (pollDue(now, h) &&
        loadRelaxed(&c_.state->next_block) < c_.total_blocks &&
        pollIfDue(now, h))
      return loadKnobHead(&knobs());
    return h;
  }

  /// Another poll of the host is due. Signed: another CTA's poll may have
  /// stored a time later than this CTA's `now`.
  __device__ static bool pollDue(unsigned long long now, const KnobHead &h) {
    return static_cast<long long>(now - h.last_poll_ns) >=
           static_cast<long long>(kPollIntervalNs);
  }

  /// The fast path's check before taking a chunk: the CTA still holds a
  /// slot the current knobs allow, on the SM it runs on. Reads the device
  /// copy only when its epoch moved; moves to a lower free slot (the CTA
  /// stays on the SM, so nothing is given back).
  __device__ bool keepsSlot(const KnobHead &h) {
    if (t_.slot < 0 || smid() != t_.sm)
      return false;
    if (h.epoch == t_.epoch && h.slot_epoch == t_.slot_epoch)
      return true;
    // A copy being rewritten keeps the cached set, the last whole one,
    // until the next chunk; the acknowledgement waits for this CTA.
    if (h.epoch != t_.epoch)
      readKnobs(h.epoch);
    t_.slot_epoch = h.slot_epoch;
    if (t_.preempt || !inMask())
      return false;
    compactSlot();
    return static_cast<unsigned>(t_.slot) < t_.allowed;
  }

  __device__ bool inMask() const {
    return t_.sm < kMaxSms && ((t_.mask_word >> (t_.sm % 32)) & 1u);
  }

  /// K, a power of two, follows the measured chunk time: doubled below
  /// 3/4 of the target, halved above twice the target, so a chunk settles
  /// between 0.75 and 1.5 targets (K = 8 for 1-us blocks at 8 us). Near the
  /// end of the grid it halves until what is left spreads over all CTAs
  /// (twice over). No division: a shift loop of at most log2(64) steps.
  __device__ void adaptChunk(unsigned long long now) {
    const unsigned long long dur = now - t_.chunk_start_ns;
    const unsigned long long target = t_.target_ns;
    unsigned k = t_.k;
    if (target == 0)
      k = 1;
    else if (dur * 4 < target * 3 && k < kMaxChunkBlocks)
      k *= 2;
    else if (dur > 2 * target && k > 1)
      k /= 2;
    const unsigned long long base = t_.chunk[0].base > t_.chunk[1].base
                                        ? t_.chunk[0].base
                                        : t_.chunk[1].base;
    const unsigned long long left =
        c_.total_blocks > base ? c_.total_blocks - base : 0;
    const unsigned long long ctas =
        2ull * ::gridDim.x * ::gridDim.y * ::gridDim.z;
    while (k > 1 && k * ctas > left)
      k >>= 1;
    t_.k = k;
  }

  /// Takes the next chunk. `outside`: the anchor of a stall, with no slot.
  /// `reserve`: claims the chunk after it too, kept in the tail.
  __device__ bool take(ChunkDecision &d, unsigned long long now, bool outside,
                       bool reserve = false) {
    // The counter only grows: after one claim past the grid (use() marks
    // it), the next one (settle() after decide(), at every CTA's end) would
    // be another atomic on the counter's line, which every CTA of the
    // launch hits at once.
    if (t_.flags & kGridTaken)
      return false;
    const unsigned long long k = t_.k;
    protocolStep();
    const unsigned long long b =
        atomicAdd(&c_.state->next_block, reserve ? 2 * k : k);
    if (reserve && b + k < c_.total_blocks) {
      const unsigned long long left = c_.total_blocks - (b + k);
      t_.reserve = b + k;
      t_.reserve_count = left < k ? static_cast<unsigned>(left) : t_.k;
      noteClaimed(t_.sm, t_.reserve, t_.reserve_count, t_.epoch);
    }
    return use(d, b, t_.k, now, outside ? 0u : tagUnder(t_.bypass), t_.epoch);
  }

  /// Runs the reserved chunk next, tagged by `flags`, under `epoch`.
  __device__ bool useReserve(ChunkDecision &d, unsigned long long now,
                             unsigned flags, unsigned epoch) {
    const unsigned count = t_.reserve_count;
    t_.reserve_count = 0;
    return use(d, t_.reserve, count, now, flags, epoch);
  }

  /// kBypass if this CTA's slot is one of `bypass` tagged ones.
  __device__ unsigned tagUnder(unsigned bypass) const {
    return static_cast<unsigned>(t_.slot) < bypass ? kBypass : 0u;
  }

  /// Makes blocks [b, b + k) (cut at the end of the grid) the next chunk,
  /// with `flags` (kBypass) and the knob epoch it is taken under; false if
  /// b is past the grid.
  __device__ bool use(ChunkDecision &d, unsigned long long b, unsigned k,
                      unsigned long long now, unsigned flags, unsigned epoch) {
    if (b >= c_.total_blocks) { // only a claim: a reserve is inside the grid
      t_.flags |= kGridTaken;
      noteClaimedPastTheGrid();
      return false;
    }
    const unsigned long long left = c_.total_blocks - b;
    const unsigned count = left < k ? static_cast<unsigned>(left) : k;
    // The SiM paper's early notification: once the last block is taken no
    // change of CTAs can help this kernel any more. One PCIe store.
    if (b + count == c_.total_blocks && c_.notices)
      c_.notices->last_block_taken = 1u;
    d = ChunkDecision{b, count, kGo | flags};
    t_.chunk_start_ns = now;
    t_.flags |= kHasChunk;
    // Only the anchor of a stall takes blocks without a slot (outside).
    noteDecided(t_.sm, t_.slot, true, b, count, (flags & kBypass) != 0, epoch,
                t_.slot < 0);
    return true;
  }

  /// Leaves: gives the slot back and reports the finished blocks. The last
  /// CTA of the first instance becomes the anchor and parks instead.
  __device__ void leave(ChunkDecision &d) {
    releaseSlot();
    // The user's stream goes on when the first instance ends, maybe before
    // a relaunched one (grow, resume) has: its blocks' writes must reach
    // the host as well (zero-copy outputs), not only the GPU, before they
    // are counted. The first instance's own are the kernel's completion's.
    if (!(t_.flags & kFirst) && t_.local_done)
      fenceSystem();
    flushDone();
    if ((t_.flags & (kFirst | kAnchor)) == kFirst) {
      noteGivesBack("first_live");
      // Acquire-release: the anchor's first look at blocks_done in park()
      // then sees every count flushed before, instead of finding one still
      // in flight and polling the host (a PCIe round trip) at kernel end.
      if (countOut(&c_.state->first_live) == 1u)
        t_.flags |= kAnchor;
    }
    if ((t_.flags & kAnchor) && park(d))
      return;
    noteDecided(t_.sm, -1, false, 0, 0, false, t_.epoch, false);
    d = ChunkDecision{0, 0, 0};
  }

  __device__ void flushDone() {
    if (t_.local_done == 0)
      return;
    noteGivesBack("blocks_done");
    releaseAdd(&c_.state->blocks_done, t_.local_done);
    t_.local_done = 0;
  }

  /// The anchor: waits for work it may take, or for every block to be
  /// done. Returns true with a chunk in `d`, false when the kernel is done.
  __device__ bool park(ChunkDecision &d) {
    unsigned sleep = 500;
    unsigned long long stuck_since = 0;
    for (;;) {
      const unsigned long long done = loadAcquire(&c_.state->blocks_done);
      if (done >= c_.total_blocks) {
        finish();
        return false;
      }
      const unsigned long long now = globalTimerNs();
      KnobHead h = loadKnobHead(&c_.state->knobs);
      if (pollIfDue(now, h))
        h = loadKnobHead(&c_.state->knobs);
      refreshIfChanged(h);
      const bool left = loadRelaxed(&c_.state->next_block) < c_.total_blocks;
      // Act only on knobs actually read (t_.epoch even), never on the
      // initial values of a CTA that met a publish in progress.
      if (left && !(t_.epoch & 1u) && !t_.preempt) {
        if (t_.slot >= 0) {
          t_.flags &= ~kStalled;
          stuck_since = 0;
          if (c_.notices)
            c_.notices->parked = 0;
          if (take(d, now, false))
            return true;
          releaseSlot();
        } else if (loadRelaxed(&c_.state->resident_ctas) == 0) {
          // Nothing of this kernel can run: after the grace period, run
          // outside the allocation and say so, rather than hang.
          if (!(t_.flags & kStalled)) {
            // Signed: %globaltimer ticks about every microsecond, so a
            // second look within the same tick finds `now` below the
            // nonzero mark (now | 1); unsigned, that wraps to "overdue".
            if (stuck_since == 0)
              stuck_since = now | 1u;
            else if (static_cast<long long>(now - stuck_since) >=
                     static_cast<long long>(t_.grace_ns)) {
              t_.flags |= kStalled;
              if (c_.notices) {
                c_.notices->stalls = c_.notices->stalls + 1u;
                // Before `finished`, which a host may see first otherwise
                // (finish() stores it with no fence); a rare path.
                fenceSystem();
              }
            }
          }
          if ((t_.flags & kStalled) && take(d, now, true)) {
            if (c_.notices)
              c_.notices->parked = 0;
            return true;
          }
        } else {
          stuck_since = 0;
          t_.flags &= ~kStalled;
        }
      } else if (!left || t_.preempt) {
        // A stall ends with what caused it: after a preemption (the SMs
        // may have gone to another kernel meanwhile) the next one waits
        // its own grace period for the resume's CTAs, and is reported.
        stuck_since = 0;
        t_.flags &= ~kStalled;
      }
      if (c_.notices)
        c_.notices->parked = 1;
      pauseNs(sleep);
      // Back off only once the knobs are acknowledged: a preemption or SM
      // move waits for the anchor's next poll to be acknowledged.
      if (loadRelaxed(&knobs().acked_epoch) != h.epoch)
        sleep = 500;
      else
        sleep = sleep * 2 < kParkMaxSleepNs ? sleep * 2 : kParkMaxSleepNs;
    }
  }

  /// Last act of the kernel: `finished`, one PCIe store. A host reads
  /// every progress field of a finished launch from `finished` alone
  /// (KernelHandle::progress), so no final mirror and no system fence
  /// (about 1.5 us) delay the kernel's end.
  __device__ void finish() {
    releaseSlot(); // the slot words must be all zero for the next launch
    if (!c_.notices)
      return;
    noteGivesBack("finished");
    c_.notices->finished = c_.generation;
  }

  /// One CTA at a time polls the host knobs: the one that moves
  /// last_poll_ns forward and takes the poll lock. Returns true if it
  /// published new knobs. A poll reads the host's image only if
  /// kPollIntervalNs passed since the last read; in between it only moves
  /// the acknowledgement's scan on (32 L2 reads, no PCIe round trip). While
  /// the published epoch is not acknowledged the next poll is due at once,
  /// so the scan's words follow each other at the rate CTAs decide (or the
  /// parked anchor looks: every 0.5 us then), not one per poll interval:
  /// a mask change on a 132-SM GPU needs 5 words. Back to back while CTAs
  /// on forbidden slots finish their chunks, one at a time: about one CTA's
  /// work. `read`: read the host's image whenever the last read was (a
  /// CTA whose launch is newer than the device copy).
  __device__ bool pollIfDue(unsigned long long now, const KnobHead &h,
                            bool read = false) {
    if (static_cast<long long>(now - h.last_poll_ns) <= 0)
      return false; // another CTA polled at a later time than this `now`
    protocolStep();
    if (atomicCAS(&knobs().last_poll_ns, h.last_poll_ns, now) != h.last_poll_ns)
      return false;
    unsigned *lock = &knobs().poll_lock;
    if (!tryLockAcquire(lock))
      return false;
    const bool changed = poll(now, read);
    volatile DeviceKnobs &dk = knobs();
    const bool acked = dk.acked_epoch == dk.epoch;
    unlockRelease(lock);
    // After the unlock, so that the next poller usually finds it free (a
    // poller that does not, with blocks left, leaves its own time: the
    // next poll is then an interval away, as before). Zero, not a time:
    // keeping `now` live past poll() cost sgemm_naive 8 registers.
    if (!acked)
      dk.last_poll_ns = 0;
    return changed;
  }

  /// Mirrors progress to the host, copies the host knobs if they moved (at
  /// most once per kPollIntervalNs, unless `read`), and acknowledges the
  /// device copy once every CTA follows it.
  __device__ bool poll(unsigned long long now, bool read) {
    volatile DeviceKnobs &dk = knobs();
    bool changed = false;
    protocolStep();
    if (read || static_cast<long long>(now - dk.last_read_ns) >=
                    static_cast<long long>(kPollIntervalNs)) {
      dk.last_read_ns = now;
      changed = copyHostKnobs();
    }
    acknowledge();
    // After the acknowledgement: a host that saw it and then reads `taken`
    // knows every block from there on was taken under the acknowledged knobs.
    if (c_.notices) {
      volatile Notices &n = *c_.notices;
      n.taken = loadRelaxed(&c_.state->next_block);
      n.done = loadRelaxed(&c_.state->blocks_done);
      n.resident_ctas = loadRelaxed(&c_.state->resident_ctas);
      n.started = 1;
    }
    return changed;
  }

  /// Publishes the host's knob set if it is newer than the device copy and
  /// whole (every word stamped with one epoch): the image arrives in one
  /// PCIe round trip, the copy goes to L2 first and the epoch after it, so
  /// no reader ever waits for a publish (readKnobs checks the stamps). The
  /// epoch is judged by a system-scope read of word 0's stamp, never by
  /// the weak copy alone: a copy that disagrees with it is read again at
  /// system scope. A host write in progress is left for the next poll.
  /// `first`: the launch handshake's copy, which no CTA reads yet.
  __device__ bool copyHostKnobs(bool first = false) {
    unsigned long long *stage = t_.stage;
    unsigned e = fetchHostImage(c_.knobs, stage);
    volatile DeviceKnobs &dk = knobs();
    protocolStep();
    // A copy that disagrees with `e` was stale or torn: once more at
    // system scope, counted. That copy is whole if all its words carry one
    // stamp, which may be newer than `e` (a host write that ended in
    // between): it is taken then, not thrown away for the next poll, which
    // a host writing more often than the 22 round trips of this read would
    // never let succeed. (A loop: written out twice, the check raises the
    // register count of some kernels.)
    for (bool again = false;; again = true) {
      if ((e & 1u) || static_cast<int>(e - dk.epoch) <= 0)
        return false;
      if (stampedWith(stage, e))
        break;
      if (again)
        return false;
      dk.strong_fetches = dk.strong_fetches + 1u;
      if (c_.notices)
        c_.notices->strong_fetches = dk.strong_fetches;
      fetchHostImageStrong(c_.knobs, stage);
      e = stampOf(stage[0]);
    }
#pragma unroll 1 // as in stampedWith()
    for (unsigned w = 0; w < kKnobImageWords; ++w) {
      if (w == 0 && !first) { // readers of the old copy see it is going
        dk.copy_epoch = e - 1u;
        __threadfence();
      }
      dk.copy.word[w] = stage[w];
    }
    dk.ack_scan_word = 0; // a new epoch is acknowledged after a new scan
    if (!first)           // the handshake's release orders the first copy
      __threadfence();
    dk.copy_epoch = e;
    // A reader that sees the new epoch sees its copy_epoch too (readKnobs
    // reads them in the other order, fenced): unordered, it could find the
    // old copy_epoch, keep its old knobs and take one more chunk under them.
    if (!first)
      __threadfence();
    protocolStep();
    dk.epoch = e;
    if (!first && c_.notices) { // the acknowledgement's fences order these
      c_.notices->published_ns = globalTimerNs();
      c_.notices->published_epoch = e;
    }
    return true;
  }

  /// Every word of the image in `stage` carries epoch `e`. Rolled:
  /// unrolled, the compiler would load the whole image into registers at
  /// once and raise the kernel's register count.
  __device__ static bool stampedWith(const unsigned long long *stage,
                                     unsigned e) {
#pragma unroll 1
    for (unsigned w = 0; w < kKnobImageWords; ++w)
      if (stampOf(stage[w]) != e)
        return false;
    return true;
  }

  /// Reports the published epoch in Notices::acked_epoch once no SM slot
  /// is held that it forbids. Each poll checks the slots of 32 SM ids (one
  /// mask word; a whole scan in one poll, even rolled, out of line or only
  /// in the parked anchor's polls, costs most kernels 8 registers) and
  /// moves on only when they are clean, so the epoch is acknowledged
  /// ceil(%nsmid / 32) polls after its last forbidden slot went (a
  /// preemption, at the first poll after: below; the parked anchor does
  /// not back off until then, and its polls in between host reads only
  /// scan). Only the poll-lock holder publishes, which restarts
  /// the scan, so the epoch and its copy cannot move under it. The fence before
  /// each check pairs with the one in claimSlot(): either the check sees a
  /// racing claim, or the claiming CTA sees the new epoch and gives its slot
  /// back; so a word found clean stays clean of forbidden slots. Costs 32 L2
  /// reads per poll until an epoch is acknowledged, nothing after.
  __device__ void acknowledge() {
    volatile DeviceKnobs &dk = knobs();
    protocolStep();
    const unsigned e = dk.epoch;
    if (e == dk.acked_epoch)
      return;
    __threadfence();
    protocolStep();
    const unsigned ctas = valueOf(dk.copy.word[kKnobCtasPerSm]);
    // The poll-lock holder is the only writer of the copy: no check.
    const unsigned preempt = valueOf(dk.copy.word[kKnobPreempt]);
    const unsigned allowed = preempt ? 0u : lowBits(ctas);
    const unsigned w = dk.ack_scan_word;
    const volatile unsigned *slots = c_.state->sm_slots + w * 32;
    const unsigned mask = valueOf(dk.copy.word[kKnobMask + w]);
    unsigned forbidden = 0;
    for (unsigned b = 0; b < 32; ++b)
      forbidden |= slots[b] & ~(((mask >> b) & 1u) ? allowed : 0u);
    if (forbidden)
      return; // a CTA has not left yet: the next poll looks again
    // A preemption forbids every slot: once no slot is held at all (one
    // load of the count; claimSlot() counts a slot before its fence and
    // epoch check, releaseSlot() after its fence, so the argument above
    // holds for the count as for the words), no other word needs a look.
    // (Checked here, after a clean word, the count costs no register; a
    // branch of its own around the scan cost every kernel 8.)
    if ((w + 1) * 32 < smIdBound() &&
        (!preempt || loadRelaxed(&c_.state->resident_ctas) != 0)) {
      dk.ack_scan_word = w + 1;
      return;
    }
    dk.acked_epoch = e;
    if (c_.notices) {
      c_.notices->acked_ns = globalTimerNs();
      fenceSystem(); // the time before the epoch, as the host reads them
      c_.notices->acked_epoch = e;
      fenceSystem(); // seen by the host before the progress mirror after it
    }
  }

  /// Slow path, taken when the knobs, another CTA's slot or this CTA's SM
  /// changed since the last decision, or always with `recheck` (settle():
  /// decide() may have read new knobs without acting on them): re-reads
  /// the knobs and re-checks the slot (claim, compact, or release). Only
  /// after the chunk's barrier.
  __device__ void refreshIfChanged(const KnobHead &h, bool recheck = false) {
    const unsigned sm = smid();
    // A CTA moved to another SM reads that SM's mask word (with the rest).
    const bool knobsMoved = h.epoch != t_.epoch || sm != t_.sm;
    if (!recheck && !knobsMoved && h.slot_epoch == t_.slot_epoch)
      return;
    if (sm != t_.sm) {
      releaseSlot(); // on the SM it was claimed on
      t_.sm = sm;
      t_.epoch = 1u; // its cached mask word is the old SM's: read again
    }
    // A publish in progress keeps the cached set, the last whole one, which
    // the checks below still apply (decide() may have read it without
    // acting on it).
    if (knobsMoved)
      readKnobs(h.epoch);
    t_.slot_epoch = h.slot_epoch;
    if (t_.epoch & 1u) { // knobs never read (or given up after a race)
      releaseSlot();
      return;
    }
    if (t_.preempt || !inMask()) {
      releaseSlot();
      return;
    }
    if (t_.slot < 0) {
      claimSlot();
      return;
    }
    compactSlot();
    if (static_cast<unsigned>(t_.slot) >= t_.allowed)
      releaseSlot();
  }

  /// Reads the device copy published under `epoch`: false, leaving the
  /// cached set as it was, if the poller is rewriting it (copy_epoch moved
  /// from `epoch`, which the caller read before, with a fence between).
  __device__ bool readKnobs(unsigned epoch) {
    // Acquire-release fences suffice: the publisher's fences before the
    // epoch and after copy_epoch pair with them (copyHostKnobs).
    fenceAcqRel();
    const KnobImage &k = knobs().copy;
    const unsigned allowed = loadValue(&k.word[kKnobCtasPerSm]),
                   bypass = loadValue(&k.word[kKnobBypass]),
                   preempt = loadValue(&k.word[kKnobPreempt]),
                   target = loadValue(&k.word[kKnobChunkTarget]),
                   grace = loadValue(&k.word[kKnobStallGrace]);
    const unsigned mask =
        t_.sm < kMaxSms ? loadValue(&k.word[kKnobMask + t_.sm / 32]) : 0u;
    fenceAcqRel();
    if (loadRelaxed(&knobs().copy_epoch) != epoch)
      return false;
    t_.epoch = epoch;
    t_.allowed = allowed < kMaxCtasPerSm ? allowed : kMaxCtasPerSm;
    t_.bypass = bypass;
    t_.preempt = preempt;
    t_.target_ns = target;
    t_.grace_ns = grace;
    t_.mask_word = mask;
    return true;
  }

  /// Takes a free slot below `allowed` on this SM: first the one its
  /// ticket names (State::sm_tickets: the CTAs holding or claiming a slot
  /// there before it), with one atomicOr; if another CTA holds that one,
  /// or the ticket is past `allowed`, the lowest free slot by
  /// compare-and-swap. CTAs arriving together (a launch, a resume) thus
  /// claim with two atomics each and no retry, dense from slot 0. A CTA
  /// left without a slot gives its ticket back; releaseSlot() does too.
  __device__ void claimSlot() {
    unsigned *word = &c_.state->sm_slots[t_.sm];
    unsigned *tickets = &c_.state->sm_tickets[t_.sm];
    noteClaiming(true);
    // Acquire: a ticket that counts a release sees that release's slot bit
    // cleared (releaseSlot()); relaxed, the atomicOr below could still
    // find the bit set, and the CTA leave the kernel for want of a slot.
    const unsigned ticket = acquireAdd(tickets, 1u);
    int bit = -1;
    unsigned old;
    protocolStep();
    if (ticket < t_.allowed) {
      old = atomicOr(word, 1u << ticket);
      if ((old >> ticket) & 1u)
        noteClaimRetried();
      else
        bit = static_cast<int>(ticket);
    } else {
      old = loadRelaxed(word);
    }
    while (bit < 0) {
      const unsigned free = ~old & lowBits(t_.allowed);
      if (free == 0) {
        // A ticket drawn after this one while it was out named a slot one
        // higher than it would have: its holder may sit above a hole that
        // nothing else announces. The slot epoch makes the CTAs of the
        // kernel look again (keepsSlot) and compact into it.
        protocolStep();
        if (atomicSub(tickets, 1u) - 1u > ticket) {
          protocolStep();
          atomicAdd(&knobs().slot_epoch, 1u);
        }
        noteClaiming(false);
        return;
      }
      const int b = __ffs(free) - 1;
      protocolStep();
      const unsigned seen = atomicCAS(word, old, old | (1u << b));
      if (seen == old)
        bit = b;
      else
        noteClaimRetried();
      old = seen;
    }
    t_.slot = bit;
    noteSlotChanged(bit);
    protocolStep();
    atomicAdd(&c_.state->resident_ctas, 1u);
    // Pairs with acknowledge(): if knobs were published since this CTA
    // read them, the acknowledging scan may have missed this slot, so it
    // goes back and the CTA decides again under the new epoch.
    __threadfence();
    if (loadRelaxed(&knobs().epoch) != t_.epoch) {
      releaseSlot();
      t_.epoch = 1u; // odd: re-read the knobs
    }
  }

  /// Moves to a lower free slot if one opened, so that slots stay dense:
  /// the tag rule "slot < bypass count" then tags exactly that many CTAs.
  __device__ void compactSlot() {
    unsigned *word = &c_.state->sm_slots[t_.sm];
    // With the slot epoch read before (keepsSlot, refreshIfChanged): an
    // acquire, so the word shows the hole the releaseSlot() that moved the
    // epoch left, not an older value (the hole would stay until the next
    // release).
    fenceAcqRel();
    const unsigned old = loadRelaxed(word);
    const unsigned free = ~old & lowBits(static_cast<unsigned>(t_.slot));
    if (free == 0)
      return;
    const int bit = __ffs(free) - 1;
    const unsigned moved = (old & ~(1u << t_.slot)) | (1u << bit);
    protocolStep();
    if (atomicCAS(word, old, moved) == old) {
      t_.slot = bit;
      noteSlotChanged(bit);
    }
  }

  __device__ void releaseSlot() {
    if (t_.slot < 0)
      return;
    // The blocks this CTA took on the SM precede, for any observer of the
    // slot word, the slot being free (acknowledge()).
    __threadfence();
    protocolStep();
    noteGivesBack("its SM slot");
    atomicAnd(&c_.state->sm_slots[t_.sm], ~(1u << t_.slot));
    noteSlotFreed(); // another CTA may claim it from here on
    // The ticket and the slot epoch follow the cleared bit for whoever
    // reads them with an acquire (claimSlot(), compactSlot()). Relaxed and
    // unfenced, their atomics could reach L2 before the bit's clear (other
    // cache lines): one fence for the three.
    fenceAcqRel();
    protocolStep();
    atomicSub(&c_.state->sm_tickets[t_.sm], 1u);
    protocolStep();
    atomicSub(&c_.state->resident_ctas, 1u);
    // Others compact into the hole at their next chunk.
    protocolStep();
    atomicAdd(&knobs().slot_epoch, 1u);
    t_.slot = -1;
    noteSlotChanged(-1);
  }

  const LaunchControl &c_;
  Tail &t_;
};

} // namespace detail
} // namespace smpart
