// One simulated launch behind smpart::KernelControl: knobs as the runtime
// stores them, the knobs the device follows, and fractional progress.
// A knob write reaches the device after the acknowledgement delay (the
// current chunk plus the acknowledging scan): until then the kernel's CTAs
// follow the old knobs and may still take blocks on every SM of the old
// and the new mask, and knobsApplied() is false.
#pragma once

#include "model.hpp"

#include "smpart/kernel_control.hpp"

#include <string>

namespace smpart::sim {

class SimKernel : public KernelControl {
public:
  /// \p Total: logical blocks of this launch.
  SimKernel(unsigned long long Id, std::string Name, const KernelTraits &T,
            double Total, const SmMask &AllSms, const double &NowUs,
            double AckUs);

  unsigned long long id() const override { return Id; }
  std::string name() const override { return Name; }
  unsigned occupancy() const override { return Traits->occupancy; }
  Status setSmMask(const SmMask &Mask) override;
  Status setCtasPerSm(unsigned N) override;
  Status setBypassCtasPerSm(unsigned N) override;
  Status preempt() override;
  Status setKnobs(const KnobSet &Set) override;
  Status resume() override;
  Status grow() override { return {}; }
  Status progress(ControlProgress &Out) const override;
  bool knobsApplied() const override { return Acked || finished(); }

  /// The launch was announced and has not run yet: whatever the controller
  /// wrote so far is what its first CTAs read.
  void started();
  /// The device acknowledges a write whose delay has passed; true when it
  /// just did.
  bool settle();
  /// Where the device may take blocks now (empty while preempted for good).
  SmMask reach() const;
  /// The knobs its CTAs follow now (for the model).
  const KnobSet &device() const { return Device; }
  bool runsNow() const { return !finished() && !Device.preempt; }
  /// Runs \p Blocks (fractional); returns the blocks actually run.
  double run(double Blocks);
  bool finished() const { return Done >= Total; }
  double total() const { return Total; }
  bool lastBlockTaken() const;
  double doneBlocks() const { return Done; }
  const KnobSet &knobs() const { return Knobs; }
  const KernelTraits &traits() const { return *Traits; }

private:
  unsigned long long Id;
  std::string Name;
  const KernelTraits *Traits;
  const double *Now;
  double AckUs;
  double Total;
  KnobSet Knobs;  ///< written by the controller
  KnobSet Device; ///< followed by the CTAs
  bool Acked = true;
  double AckAt = 0;
  bool Started = false;
  double Done = 0;
  bool LastTaken = false;
};

} // namespace smpart::sim
