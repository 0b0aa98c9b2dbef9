// A fake kernel whose knobs the client's thread writes while the test
// reads them: every call under one mutex.
#pragma once

#include "fake_kernel.hpp"

#include <mutex>

namespace smpart::testing {

class LockedKernel : public KernelControl {
public:
  LockedKernel(unsigned long long Id, std::string Name,
               unsigned long long Total, const std::vector<unsigned> &SmIds)
      : K(Id, std::move(Name), Total, 4, SmIds, nullptr) {}
  unsigned long long id() const override { return K.id(); }
  std::string name() const override { return K.name(); }
  unsigned occupancy() const override { return K.occupancy(); }
  Status setSmMask(const SmMask &M) override {
    return locked([&] { return K.setSmMask(M); });
  }
  Status setCtasPerSm(unsigned N) override {
    return locked([&] { return K.setCtasPerSm(N); });
  }
  Status setBypassCtasPerSm(unsigned N) override {
    return locked([&] { return K.setBypassCtasPerSm(N); });
  }
  Status preempt() override {
    return locked([&] { return K.preempt(); });
  }
  Status setKnobs(const KnobSet &S) override {
    return locked([&] { return K.setKnobs(S); });
  }
  Status resume() override {
    return locked([&] { return K.resume(); });
  }
  Status grow() override {
    return locked([&] { return K.grow(); });
  }
  Status progress(ControlProgress &Out) const override {
    std::lock_guard<std::mutex> L(Mu);
    return K.progress(Out);
  }
  bool knobsApplied() const override {
    std::lock_guard<std::mutex> L(Mu);
    return K.knobsApplied();
  }
  void setApplied(bool A) {
    std::lock_guard<std::mutex> L(Mu);
    K.Applied = A;
  }
  bool preempted() const {
    std::lock_guard<std::mutex> L(Mu);
    return K.Preempted;
  }
  SmMask mask() const {
    std::lock_guard<std::mutex> L(Mu);
    return K.Mask;
  }

private:
  template <class F> Status locked(F Fn) {
    std::lock_guard<std::mutex> L(Mu);
    return Fn();
  }
  mutable std::mutex Mu;
  FakeKernel K;
};

} // namespace smpart::testing
