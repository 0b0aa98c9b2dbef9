// What the controller and the profiler need from one running kernel: the
// knobs and the progress of smpart::KernelHandle, behind an interface so
// that the decision -> knobs logic is tested on the CPU with a fake.
// runtime/controller/runtime_glue.cpp adapts smpart::KernelHandle to it.
#pragma once

#include "smpart/detail/plan.hpp"   // SmMask (CUDA-free)
#include "smpart/detail/status.hpp" // Status (CUDA-free)

#include <string>

namespace smpart {

/// Logical blocks of one launch (smpart::Progress without CUDA).
struct ControlProgress {
  unsigned long long taken = 0;
  unsigned long long done = 0; ///< executed blocks: SiM Eq. 1's TB_e
  unsigned long long total = 0;
  bool finished = false;
};

class KernelControl {
public:
  virtual ~KernelControl() = default;
  /// Unique per launch.
  virtual unsigned long long id() const = 0;
  /// The kernel's name, as profiles name it.
  virtual std::string name() const = 0;
  /// CTAs per SM that fit (the runtime's occupancy), 0 when unknown.
  virtual unsigned occupancy() const = 0;
  virtual Status setSmMask(const SmMask &Mask) = 0;
  virtual Status setCtasPerSm(unsigned N) = 0;
  virtual Status setBypassCtasPerSm(unsigned N) = 0;
  virtual Status preempt() = 0;
  /// Writes a whole knob set at once (one knob epoch on the device): what
  /// the controller uses for each step of a re-plan.
  virtual Status setKnobs(const KnobSet &Set) = 0;
  /// Clears preemption (if the knobs still say preempt) and relaunches
  /// enough CTAs for the current knobs.
  virtual Status resume() = 0;
  /// Launches more CTAs after the mask or CTAs per SM grew.
  virtual Status grow() = 0;
  virtual Status progress(ControlProgress &Out) const = 0;
  /// True once the kernel follows every knob written so far: none of its
  /// CTAs takes a block the knobs forbid any more
  /// (KernelHandle::knobsApplied). SMs taken from it go to another kernel
  /// only then.
  virtual bool knobsApplied() const = 0;
};

} // namespace smpart
