// The only file that connects the CUDA-free controller, profiler and trace
// to libsmpart (it is part of the smpart library):
//
//   HandleControl       smpart::KernelHandle -> smpart::KernelControl
//   ControllerObserver  launch events -> Controller::onArrival/...
//   EpochTimer          Controller::epoch() every SMPART_EPOCH_US
//   TraceObserver       launch events -> trace (when no controller traces)
//   ProfileObserver     SMPART_PROFILE: a live sweep per launch, written
//                       as smpart.profiles/1 at exit
//   initFromEnvironment SMPART_* -> the observers above
#include "smpart/controller_runtime.hpp"
#include "smpart/detail/epoch_schedule.hpp"
#include "smpart/profiler.hpp"
#include "smpart/service.hpp"
#include "smpart/trace.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <thread>

namespace smpart {
namespace {

class HandleControl : public KernelControl {
public:
  explicit HandleControl(KernelHandle H) : H(std::move(H)) {}
  unsigned long long id() const override { return H.id(); }
  std::string name() const override { return H.name() ? H.name() : ""; }
  unsigned occupancy() const override { return H.occupancy(); }
  Status setSmMask(const SmMask &M) override { return H.setSmMask(M); }
  Status setCtasPerSm(unsigned N) override { return H.setCtasPerSm(N); }
  Status setBypassCtasPerSm(unsigned N) override {
    return H.setBypassCtasPerSm(N);
  }
  Status preempt() override { return H.preempt(); }
  Status setKnobs(const KnobSet &S) override { return H.setKnobs(S); }
  Status resume() override { return H.resume(0); }
  Status grow() override { return H.grow(0); }
  Status progress(ControlProgress &Out) const override {
    Progress P;
    Status S = H.progress(P);
    Out.taken = P.taken;
    // A CTA adds its finished blocks to `done` once, when it leaves (one
    // atomic per CTA, not per block), and persistent CTAs stay until the
    // grid is done: while they run, `done` barely moves. Executed blocks
    // (SiM Eq. 1, the sweep's rate) are read from blocks taken, which lead
    // them by at most the blocks in flight (resident CTAs x one chunk).
    Out.done = std::max(P.done, P.taken);
    Out.total = P.total;
    Out.finished = P.finished;
    return S;
  }
  bool knobsApplied() const override { return H.knobsApplied(); }

private:
  mutable KernelHandle H; // knob calls are non-const on the handle
};

class ControllerObserver : public LaunchObserver {
public:
  explicit ControllerObserver(std::shared_ptr<Controller> C)
      : C(std::move(C)) {}
  void onLaunch(const KernelHandle &H) override {
    if (H.valid() && !H.opaque())
      C->onArrival(std::make_shared<HandleControl>(H));
  }
  void onLastBlockTaken(const KernelHandle &H) override {
    C->onLastBlockTaken(H.id(), H.successorQueued());
  }
  void onKnobsApplied(const KernelHandle &H) override {
    C->onKnobsApplied(H.id());
  }
  void onDone(const KernelHandle &H) override {
    C->onDeparture(H.id(), H.successorQueued());
  }

private:
  std::shared_ptr<Controller> C;
};

class TraceObserver : public LaunchObserver {
public:
  void onLaunch(const KernelHandle &H) override {
    if (auto *T = trace::global()) {
      T->kernelArrival(H.id(), H.name() ? H.name() : "", H.totalBlocks());
      T->kernelStart(H.id(), H.name() ? H.name() : "");
    }
  }
  void onLastBlockTaken(const KernelHandle &H) override {
    if (auto *T = trace::global())
      T->lastBlockTaken(H.id(), H.name() ? H.name() : "");
  }
  void onDone(const KernelHandle &H) override {
    if (auto *T = trace::global())
      T->kernelDone(H.id(), H.name() ? H.name() : "");
  }
};

// SMPART_PROFILE: sweeps each launch while it runs (one kernel at a time:
// launches that overlap a sweep run untouched and are not measured). A
// launch too short for the whole schedule measures the steps it has time
// for; the next launch of the same kernel starts where it stopped, so
// repeated launches complete the curve and then refine it.
class ProfileObserver : public LaunchObserver {
public:
  ProfileObserver(std::string Path, const DeviceInfo &D)
      : Path(std::move(Path)), Ids(D.sm_ids), Builder(gpuOf(D)) {}
  ~ProfileObserver() override { finish(); }

  void onLaunch(const KernelHandle &H) override {
    std::lock_guard<std::mutex> L(Mu);
    // No SM ids, no step (configureFromEnvironment refuses that already).
    if (Busy || !H.valid() || H.opaque() || Ids.empty())
      return;
    Busy = true;
    SweepId = H.id();
    Builder.addLaunch(H.name() ? H.name() : "", H.totalBlocks());
    auto Control = std::make_shared<HandleControl>(H);
    const unsigned NumSms = static_cast<unsigned>(Ids.size());
    profiler::SweepOptions O;
    O.steps = profiler::defaultSchedule(NumSms, H.occupancy());
    const std::size_t First = NextStep[Name(H)] % O.steps.size();
    std::rotate(O.steps.begin(), O.steps.begin() + First, O.steps.end());
    Stop = false;
    Worker = std::thread([this, Control, NumSms, O,
                          Name = std::string(H.name() ? H.name() : "")] {
      profiler::SweepDriver D(*Control, Ids, O);
      auto Start = std::chrono::steady_clock::now();
      auto &Nvml = profiler::NvmlPower::instance();
      std::map<std::pair<unsigned, unsigned>, std::pair<double, unsigned>>
          Power;
      while (!Stop) {
        double Now = std::chrono::duration<double, std::milli>(
                         std::chrono::steady_clock::now() - Start)
                         .count();
        if (!D.tick(Now))
          break;
        if (auto Cur = D.current(); Cur && Nvml.available()) {
          double W = 0;
          if (Nvml.sampleWatts(0, W, nullptr)) {
            auto &Acc = Power[{Cur->sms, Cur->ctas_per_sm}];
            Acc.first += W;
            ++Acc.second;
          }
        }
        std::this_thread::sleep_for(std::chrono::microseconds(500));
      }
      std::lock_guard<std::mutex> L(Mu);
      NextStep[Name] += D.sweep().samples().size();
      for (const profiler::RateSample &S : D.sweep().samples()) {
        std::optional<double> W;
        auto It = Power.find({S.step.sms, S.step.ctas_per_sm});
        if (It != Power.end() && It->second.second)
          W = It->second.first / It->second.second;
        Builder.addSample(Name, S, NumSms, W);
      }
    });
  }
  void onLastBlockTaken(const KernelHandle &) override {}
  void onDone(const KernelHandle &H) override {
    std::thread T;
    {
      std::lock_guard<std::mutex> L(Mu);
      if (!Busy || H.id() != SweepId)
        return;
      Stop = true;
      T = std::move(Worker);
    }
    if (T.joinable())
      T.join();
    std::lock_guard<std::mutex> L(Mu);
    Busy = false;
    write();
  }
  void finish() {
    std::thread T;
    {
      std::lock_guard<std::mutex> L(Mu);
      Stop = true;
      T = std::move(Worker);
    }
    if (T.joinable())
      T.join();
    std::lock_guard<std::mutex> L(Mu);
    write();
  }

private:
  static policy::GpuSpec gpuOf(const DeviceInfo &D) {
    policy::GpuSpec G;
    G.num_sms = static_cast<int>(D.sm_ids.size());
    if (D.max_threads_per_sm)
      G.max_threads_per_sm = D.max_threads_per_sm;
    if (D.max_blocks_per_sm)
      G.max_blocks_per_sm = D.max_blocks_per_sm;
    return G;
  }
  void write() {
    std::string Err;
    if (!Builder.write(Path, &Err) && !Warned) {
      Warned = true;
      std::fprintf(stderr, "smpart: %s\n", Err.c_str());
    }
  }

  static std::string Name(const KernelHandle &H) {
    return H.name() ? H.name() : "";
  }

  std::string Path;
  std::vector<unsigned> Ids;
  profiler::ProfileBuilder Builder;
  std::map<std::string, std::size_t> NextStep; // per kernel name
  std::mutex Mu;
  std::thread Worker;
  std::atomic<bool> Stop{false};
  bool Busy = false, Warned = false;
  unsigned long long SweepId = 0;
};

// SMPART_SERVICE: this process's kernels are planned by smpartd; the
// client applies its decisions to them (they start on every SM and are
// confined once the service answered, a round trip later).
class ServiceObserver : public LaunchObserver {
public:
  explicit ServiceObserver(std::shared_ptr<service::Client> C)
      : C(std::move(C)) {}
  void onLaunch(const KernelHandle &H) override {
    if (H.valid() && !H.opaque())
      C->arrive(controlOf(H));
  }
  void onLastBlockTaken(const KernelHandle &H) override {
    C->lastBlockTaken(H.id());
  }
  void onDone(const KernelHandle &H) override { C->depart(H.id()); }

private:
  std::shared_ptr<service::Client> C;
};

class FanOut : public LaunchObserver {
public:
  std::vector<std::shared_ptr<LaunchObserver>> All;
  void onLaunch(const KernelHandle &H) override {
    for (auto &O : All)
      O->onLaunch(H);
  }
  void onLastBlockTaken(const KernelHandle &H) override {
    for (auto &O : All)
      O->onLastBlockTaken(H);
  }
  void onKnobsApplied(const KernelHandle &H) override {
    for (auto &O : All)
      O->onKnobsApplied(H);
  }
  void onDone(const KernelHandle &H) override {
    for (auto &O : All)
      O->onDone(H);
  }
};

} // namespace

std::shared_ptr<KernelControl> controlOf(KernelHandle H) {
  return std::make_shared<HandleControl>(std::move(H));
}

std::shared_ptr<LaunchObserver> observerFor(std::shared_ptr<Controller> C) {
  return std::make_shared<ControllerObserver>(std::move(C));
}

EpochTimer::EpochTimer(std::shared_ptr<Controller> C)
    : C(std::move(C)), Worker([this] { run(); }) {}

EpochTimer::~EpochTimer() { stop(); }

void EpochTimer::stop() {
  {
    std::lock_guard<std::mutex> L(Mu);
    Stop = true;
  }
  Cv.notify_all();
  if (Worker.joinable() && Worker.get_id() != std::this_thread::get_id())
    Worker.join();
}

void EpochTimer::run() {
  using Clock = std::chrono::steady_clock;
  const auto Start = Clock::now();
  const auto Period = std::chrono::microseconds(
      static_cast<long long>(std::max(1.0, C->epochUs())));
  auto Next = Start + Period;
  std::unique_lock<std::mutex> L(Mu);
  while (!Stop) {
    if (Cv.wait_until(L, Next, [this] { return Stop; }))
      break;
    L.unlock();
    C->epoch(std::chrono::duration<double, std::micro>(Clock::now() - Start)
                 .count());
    L.lock();
    Next = detail::nextEpochDue(Next, Clock::now(), Period);
  }
}

namespace {
std::shared_ptr<Controller> &processControllerSlot() {
  static std::shared_ptr<Controller> C; // set once, under initFromEnvironment
  return C;
}
std::shared_ptr<service::Client> &processServiceSlot() {
  static std::shared_ptr<service::Client> C; // likewise
  return C;
}
} // namespace

std::shared_ptr<Controller> processController() {
  (void)controller::initFromEnvironment();
  return processControllerSlot();
}

std::shared_ptr<service::Client> processServiceClient() {
  (void)controller::initFromEnvironment();
  return processServiceSlot();
}

std::string controller::initFromEnvironment() {
  static std::once_flag Once;
  static std::string Result;
  std::call_once(Once, [] {
    auto Get = [](const char *N) -> const char * { return std::getenv(N); };
    const char *Service = Get("SMPART_SERVICE");
    const bool Any = Get("SMPART_POLICY") || Get("SMPART_PROFILES") ||
                     Get("SMPART_TRACE") || Get("SMPART_PROFILE") || Service;
    if (!Any)
      return;
    if (Service && (Get("SMPART_POLICY") || Get("SMPART_PROFILE"))) {
      Result = "smpart: SMPART_SERVICE plans with the service's policy; unset "
               "SMPART_POLICY and SMPART_PROFILE (running without either)";
      return;
    }
    DeviceInfo D;
    if (Status S = deviceInfo(D); !S.ok()) {
      Result = "smpart: " + S.message() + "; running without the controller";
      return;
    }
    EnvConfig C = configureFromEnvironment(Get, D.sm_ids);
    if (!C.error.empty()) {
      Result = C.error;
      return;
    }
    auto Fan = std::make_shared<FanOut>();
    if (C.controller) {
      std::shared_ptr<Controller> Ctl = std::move(C.controller);
      processControllerSlot() = Ctl;
      Fan->All.push_back(observerFor(Ctl));
      // Stopped at exit, before the controller's kernels go away.
      static std::unique_ptr<EpochTimer> Timer;
      Timer = std::make_unique<EpochTimer>(Ctl);
      std::atexit([] { Timer->stop(); });
    } else if (C.trace)
      Fan->All.push_back(std::make_shared<TraceObserver>());
    if (Service && *Service) {
      processServiceSlot() =
          std::make_shared<service::Client>(Service, D.sm_ids);
      Fan->All.push_back(
          std::make_shared<ServiceObserver>(processServiceSlot()));
    }
    if (!C.profile_out.empty()) {
      auto P = std::make_shared<ProfileObserver>(C.profile_out, D);
      Fan->All.push_back(P);
      // Written after each swept launch and once more at exit.
      static std::shared_ptr<ProfileObserver> AtExit = P;
      std::atexit([] { AtExit->finish(); });
    }
    setLaunchObserver(Fan);
  });
  return Result;
}

} // namespace smpart
