// Chrome/Perfetto trace-event writer (`smpart.trace/1`, docs/trace.md) and
// NVTX ranges for the same events. CUDA-free: NVTX3 is header-only and a
// no-op unless a tool (Nsight Systems) injects itself.
//
// Events are kept in memory, each already serialised (a long-running
// service's trace grows by its text, not by JSON trees, and a flush copies
// text instead of serialising every event again), and written as one JSON
// document to a temporary file that is then renamed over the target, so the
// file on disk is always a complete, valid trace: written on flush(), at
// most every flush interval while events arrive, by the destructor, and at
// exit for the global writer.
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace smpart::trace {

inline constexpr const char *TraceSchema = "smpart.trace/1";

class TraceWriter {
public:
  /// Opens \p Path for writing (writes an empty trace to check that it can).
  /// A FIFO or a device (/dev/stdout) gets the whole trace once, when the
  /// writer closes, instead of at every flush.
  /// On failure returns null and sets \p Error to one line naming the path.
  static std::unique_ptr<TraceWriter> open(const std::string &Path,
                                           std::string *Error);
  ~TraceWriter();
  TraceWriter(const TraceWriter &) = delete;
  TraceWriter &operator=(const TraceWriter &) = delete;

  const std::string &path() const { return Path; }

  // Kernel lifetime: one async slice per launch (arrival .. done), with
  // instants for start and the early notification.
  void kernelArrival(unsigned long long Id, const std::string &Name,
                     unsigned long long TotalBlocks);
  void kernelStart(unsigned long long Id, const std::string &Name);
  void lastBlockTaken(unsigned long long Id, const std::string &Name);
  void kernelDone(unsigned long long Id, const std::string &Name);

  /// A policy decision: what triggered it, the inputs (kernels, progress),
  /// the plan (`smpart.plan/1`) and the notes.
  void decision(const std::string &Policy, const std::string &Trigger,
                const nlohmann::json &Inputs, const nlohmann::json &Plan,
                const std::vector<std::string> &Notes);
  /// One knob written on one kernel (`sm_mask`, `ctas_per_sm`,
  /// `bypass_ctas_per_sm`, `grow`).
  void knob(unsigned long long Id, const std::string &Name,
            const std::string &Knob, const nlohmann::json &Value);
  /// The allocation a kernel holds after a decision is applied (counters
  /// "sms" and "ctas_per_sm"; what `smpart-trace plot` draws).
  void allocation(unsigned long long Id, const std::string &Name, unsigned Sms,
                  unsigned CtasPerSm, bool Preempted);
  /// One epoch of measurement (controller_epoch.hpp): an instant with
  /// every kernel's sample, and a counter track "np <kernel> #<id>" per
  /// kernel with its normalised progress.
  void epoch(unsigned long long Index, double StartUs, double EndUs,
             const nlohmann::json &Kernels);
  /// An opaque partition (green context) of tenant \p Name: the size the
  /// plan gives its next launch (`opaque_target`, counter "opaque target
  /// <name>").
  void opaqueTarget(const std::string &Name, unsigned Target);
  /// The real SM ids the partition holds from this launch on (empty:
  /// removed), and whether every rewritten kernel acknowledged leaving
  /// them (`opaque_hold`, counter "opaque sms <name>"; `smpart-trace
  /// plot` draws these SMs).
  void opaqueHold(const std::string &Name, const std::vector<unsigned> &SmIds,
                  bool Clear);
  void preempt(unsigned long long Id, const std::string &Name);
  void resume(unsigned long long Id, const std::string &Name);
  /// Free-form instant (warnings, profiler steps).
  void note(const std::string &Category, const std::string &Text);

  /// Writes the trace now (temp file + rename). False and \p Error on failure.
  bool flush(std::string *Error = nullptr);

  /// Test hooks: the clock (microseconds) and the automatic flush interval
  /// (0: flush after every event; negative: only explicit/exit flushes).
  void setClockForTesting(std::function<double()> NowUs);
  void setFlushIntervalMs(double Ms);

  std::size_t eventCount() const;

private:
  explicit TraceWriter(std::string Path);
  void add(nlohmann::json Event);
  nlohmann::json base(const char *Name, const char *Cat, const char *Ph);
  /// An instant event of one kernel, with its NVTX mark.
  void kernelInstant(const char *Event, const char *Cat, unsigned long long Id,
                     const std::string &Name, const char *Label,
                     uint32_t Color);
  bool writeLocked(std::string *Error);

  std::string Path;
  mutable std::mutex Mu;
  std::vector<std::string> Events; ///< each one serialised event
  std::function<double()> Now;
  std::chrono::steady_clock::time_point Start;
  double FlushIntervalMs = 250;
  double LastFlushUs = 0;
  double FlushCostUs = 0; ///< how long the last write took
  bool Dirty = false;
  bool Special = false; ///< a FIFO or a device: written once, at close
  int Pid = 0;
  std::map<unsigned long long, unsigned long long> NvtxRanges;
};

/// The process-wide writer (null when tracing is off).
TraceWriter *global();
/// Installs \p W as the global writer; it is flushed at exit (std::exit or
/// return from main). Passing null flushes and removes the current one.
void setGlobal(std::unique_ptr<TraceWriter> W);

} // namespace smpart::trace
