// A KernelControl that records every call and simulates progress: each
// advance() runs `rate(sms, ctas)` logical blocks while not preempted.
#pragma once

#include "smpart/kernel_control.hpp"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace smpart::testing {

struct Call {
  unsigned long long id;
  std::string what;
  unsigned long long value; // ctas / bypass / mask popcount
  SmMask mask;
};

class FakeKernel : public KernelControl {
public:
  FakeKernel(unsigned long long Id, std::string Name, unsigned long long Total,
             unsigned Occupancy, const std::vector<unsigned> &SmIds,
             std::vector<Call> *Log)
      : Id(Id), Name(std::move(Name)), Occ(Occupancy), Log(Log) {
    P.total = Total;
    for (unsigned S : SmIds)
      Mask.set(S);
    Ctas = Occupancy;
  }

  unsigned long long id() const override { return Id; }
  std::string name() const override { return Name; }
  unsigned occupancy() const override { return Occ; }
  Status setSmMask(const SmMask &M) override {
    Mask = M;
    record("setSmMask", M.count());
    if (OnMaskWrite)
      OnMaskWrite();
    return {};
  }
  Status setCtasPerSm(unsigned N) override {
    Ctas = N;
    record("setCtasPerSm", N);
    return {};
  }
  Status setBypassCtasPerSm(unsigned N) override {
    Bypass = N;
    record("setBypassCtasPerSm", N);
    return {};
  }
  bool knobsApplied() const override { return Applied; }
  /// One write of a whole set: logged once as "setKnobs".
  Status setKnobs(const KnobSet &S) override {
    Mask = S.mask;
    Ctas = S.ctas_per_sm;
    Bypass = S.bypass_ctas_per_sm;
    Preempted = S.preempt;
    record("setKnobs", S.mask.count());
    if (OnMaskWrite)
      OnMaskWrite();
    return {};
  }
  Status preempt() override {
    Preempted = true;
    record("preempt", 0);
    return {};
  }
  Status resume() override {
    Preempted = false;
    record("resume", 0);
    return {};
  }
  Status grow() override {
    record("grow", 0);
    return {};
  }
  Status progress(ControlProgress &Out) const override {
    ++ProgressReads;
    Out = P;
    Out.finished = P.done >= P.total;
    return {};
  }

  /// Runs some blocks: blocks per step = SMs * CTAs per SM (not preempted).
  void advance(unsigned long long Steps = 1) {
    if (Preempted)
      return;
    unsigned long long N = Steps * Mask.count() * Ctas;
    P.taken = std::min(P.total, P.taken + N);
    P.done = P.taken;
  }

  unsigned long long Id;
  std::string Name;
  unsigned Occ;
  std::vector<Call> *Log;
  SmMask Mask;
  unsigned Ctas = 0, Bypass = 0;
  bool Preempted = false;
  bool Started = false; ///< test: kernel is running on the GPU
  /// test: what knobsApplied() answers (the device acknowledged)
  bool Applied = true;
  ControlProgress P;
  mutable int ProgressReads = 0;
  std::function<void()> OnMaskWrite;

private:
  void record(const char *What, unsigned long long V) {
    if (Log)
      Log->push_back({Id, What, V, Mask});
  }
};

/// A process environment for configureFromEnvironment(), without setenv.
struct Env {
  std::map<std::string, std::string> Vars;
  std::function<const char *(const char *)> fn() {
    return [this](const char *N) -> const char * {
      auto It = Vars.find(N);
      return It == Vars.end() ? nullptr : It->second.c_str();
    };
  }
};

} // namespace smpart::testing
