#include "smpart/detail/output_file.hpp"
#include "smpart/trace.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

#if SMPART_TRACE_HAVE_NVTX
#include <nvtx3/nvToolsExt.h>
#endif

namespace smpart::trace {

namespace {
std::string hexId(unsigned long long Id) {
  char Buf[32];
  std::snprintf(Buf, sizeof Buf, "0x%llx", Id);
  return Buf;
}

#if SMPART_TRACE_HAVE_NVTX
nvtxDomainHandle_t nvtxDomain() {
  static nvtxDomainHandle_t D = nvtxDomainCreateA("smpart");
  return D;
}
nvtxEventAttributes_t nvtxAttrs(const std::string &Msg, uint32_t Color) {
  nvtxEventAttributes_t A = {};
  A.version = NVTX_VERSION;
  A.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  A.colorType = NVTX_COLOR_ARGB;
  A.color = Color;
  A.messageType = NVTX_MESSAGE_TYPE_ASCII;
  A.message.ascii = Msg.c_str();
  return A;
}
void nvtxMark(const std::string &Msg, uint32_t Color) {
  nvtxEventAttributes_t A = nvtxAttrs(Msg, Color);
  nvtxDomainMarkEx(nvtxDomain(), &A);
}
#else
void nvtxMark(const std::string &, uint32_t) {}
#endif
} // namespace

TraceWriter::TraceWriter(std::string P)
    : Path(std::move(P)), Start(std::chrono::steady_clock::now()),
      Pid(static_cast<int>(getpid())) {
  Now = [this] {
    return std::chrono::duration<double, std::micro>(
               std::chrono::steady_clock::now() - Start)
        .count();
  };
  nlohmann::json P1 = {{"name", "process_name"},
                       {"ph", "M"},
                       {"ts", 0},
                       {"pid", Pid},
                       {"tid", 0},
                       {"args", {{"name", "smpart"}}}};
  Events.push_back(P1.dump());
}

std::unique_ptr<TraceWriter> TraceWriter::open(const std::string &Path,
                                               std::string *Error) {
  if (Path.empty()) {
    if (Error)
      *Error = "trace: empty file name";
    return nullptr;
  }
  std::unique_ptr<TraceWriter> W(new TraceWriter(Path));
  std::lock_guard<std::mutex> L(W->Mu);
  struct stat St;
  W->Special = ::stat(smpart::detail::followSymlinks(Path).c_str(), &St) == 0 &&
               !S_ISREG(St.st_mode) && !S_ISDIR(St.st_mode);
  if (!W->Special && !W->writeLocked(Error))
    return nullptr;
  return W;
}

TraceWriter::~TraceWriter() {
  std::lock_guard<std::mutex> L(Mu);
  Special = false; // the one write a FIFO or a device gets
  writeLocked(nullptr);
}

void TraceWriter::setClockForTesting(std::function<double()> NowUs) {
  std::lock_guard<std::mutex> L(Mu);
  Now = std::move(NowUs);
}

void TraceWriter::setFlushIntervalMs(double Ms) {
  std::lock_guard<std::mutex> L(Mu);
  FlushIntervalMs = Ms;
}

std::size_t TraceWriter::eventCount() const {
  std::lock_guard<std::mutex> L(Mu);
  return Events.size();
}

nlohmann::json TraceWriter::base(const char *Name, const char *Cat,
                                 const char *Ph) {
  return {{"name", Name}, {"cat", Cat}, {"ph", Ph},
          {"ts", 0},      {"pid", Pid}, {"tid", 1}};
}

void TraceWriter::add(nlohmann::json Event) {
  std::lock_guard<std::mutex> L(Mu);
  double T = Now();
  Event["ts"] = T;
  // error_handler_t::replace: kernel names are not guaranteed UTF-8.
  Events.push_back(
      Event.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  Dirty = true;
  // A trace grown large takes a while to write: the writes then space out
  // so that they take at most a twentieth of the time (a service's thread
  // writes it between its tenants' messages). An interval of 0 still
  // writes every event.
  const double IntervalUs =
      FlushIntervalMs > 0 ? std::max(FlushIntervalMs * 1000.0, 20 * FlushCostUs)
                          : 0;
  if (FlushIntervalMs >= 0 && (T - LastFlushUs) >= IntervalUs)
    writeLocked(nullptr);
}

void TraceWriter::kernelArrival(unsigned long long Id, const std::string &Name,
                                unsigned long long TotalBlocks) {
  nlohmann::json E = base(Name.c_str(), "kernel", "b");
  E["id"] = hexId(Id);
  E["args"] = {
      {"kernel", Name}, {"kernel_id", Id}, {"total_blocks", TotalBlocks}};
#if SMPART_TRACE_HAVE_NVTX
  {
    nvtxEventAttributes_t A = nvtxAttrs("smpart " + Name, 0xff2080c0u);
    nvtxRangeId_t R = nvtxDomainRangeStartEx(nvtxDomain(), &A);
    std::lock_guard<std::mutex> L(Mu);
    NvtxRanges[Id] = R;
  }
#endif
  add(std::move(E));
}

void TraceWriter::kernelInstant(const char *Event, const char *Cat,
                                unsigned long long Id, const std::string &Name,
                                const char *Label, uint32_t Color) {
  nlohmann::json E = base(Event, Cat, "i");
  E["s"] = "t";
  E["args"] = {{"kernel", Name}, {"kernel_id", Id}};
  nvtxMark(Label + Name, Color);
  add(std::move(E));
}

void TraceWriter::kernelStart(unsigned long long Id, const std::string &Name) {
  kernelInstant("start", "kernel", Id, Name, "smpart start ", 0xff2080c0u);
}

void TraceWriter::lastBlockTaken(unsigned long long Id,
                                 const std::string &Name) {
  kernelInstant("last_block_taken", "kernel", Id, Name,
                "smpart last block taken ", 0xff40a040u);
}

void TraceWriter::kernelDone(unsigned long long Id, const std::string &Name) {
  nlohmann::json E = base(Name.c_str(), "kernel", "e");
  E["id"] = hexId(Id);
  E["args"] = {{"kernel", Name}, {"kernel_id", Id}};
#if SMPART_TRACE_HAVE_NVTX
  {
    unsigned long long R = 0;
    bool Found = false;
    {
      std::lock_guard<std::mutex> L(Mu);
      auto It = NvtxRanges.find(Id);
      if (It != NvtxRanges.end()) {
        R = It->second;
        Found = true;
        NvtxRanges.erase(It);
      }
    }
    if (Found)
      nvtxDomainRangeEnd(nvtxDomain(), R);
  }
#endif
  add(std::move(E));
}

void TraceWriter::decision(const std::string &Policy,
                           const std::string &Trigger,
                           const nlohmann::json &Inputs,
                           const nlohmann::json &Plan,
                           const std::vector<std::string> &Notes) {
  nlohmann::json E = base("decision", "controller", "i");
  E["s"] = "g";
  E["args"] = {{"policy", Policy},
               {"trigger", Trigger},
               {"inputs", Inputs},
               {"plan", Plan},
               {"notes", Notes}};
  nvtxMark("smpart decision " + Policy + " (" + Trigger + ")", 0xffd04040u);
  add(std::move(E));
}

void TraceWriter::knob(unsigned long long Id, const std::string &Name,
                       const std::string &Knob, const nlohmann::json &Value) {
  nlohmann::json E = base("knob", "knob", "i");
  E["s"] = "t";
  E["args"] = {
      {"kernel", Name}, {"kernel_id", Id}, {"knob", Knob}, {"value", Value}};
  nvtxMark("smpart " + Knob + " " + Name + " = " + Value.dump(), 0xffc0a020u);
  add(std::move(E));
}

void TraceWriter::allocation(unsigned long long Id, const std::string &Name,
                             unsigned Sms, unsigned CtasPerSm, bool Preempted) {
  const std::string Track = Name + " #" + std::to_string(Id);
  nlohmann::json C1 = base(("sms " + Track).c_str(), "allocation", "C");
  C1["args"] = {{"sms", Preempted ? 0u : Sms}};
  nlohmann::json C2 = base(("ctas_per_sm " + Track).c_str(), "allocation", "C");
  C2["args"] = {{"ctas_per_sm", Preempted ? 0u : CtasPerSm}};
  nlohmann::json E = base("allocation", "allocation", "i");
  E["s"] = "t";
  E["args"] = {{"kernel", Name},
               {"kernel_id", Id},
               {"sms", Sms},
               {"ctas_per_sm", CtasPerSm},
               {"preempted", Preempted}};
  add(std::move(C1));
  add(std::move(C2));
  add(std::move(E));
}

void TraceWriter::epoch(unsigned long long Index, double StartUs, double EndUs,
                        const nlohmann::json &Kernels) {
  // No NVTX mark: epochs come every millisecond and would drown the rest.
  for (const nlohmann::json &K : Kernels) {
    const std::string Track = "np " + K.value("kernel", std::string()) + " #" +
                              std::to_string(K.value("kernel_id", 0ull));
    nlohmann::json C = base(Track.c_str(), "epoch", "C");
    C["args"] = {{"np", K.value("np", 0.0)}};
    add(std::move(C));
  }
  nlohmann::json E = base("epoch", "epoch", "i");
  E["s"] = "g";
  E["args"] = {{"index", Index},
               {"start_us", StartUs},
               {"end_us", EndUs},
               {"kernels", Kernels}};
  add(std::move(E));
}

void TraceWriter::opaqueTarget(const std::string &Name, unsigned Target) {
  nlohmann::json C = base(("opaque target " + Name).c_str(), "opaque", "C");
  C["args"] = {{"sms", Target}};
  nlohmann::json E = base("opaque_target", "opaque", "i");
  E["s"] = "t";
  E["args"] = {{"partition", Name}, {"sms", Target}};
  nvtxMark("smpart opaque " + Name + " target " + std::to_string(Target),
           0xff606060u);
  add(std::move(C));
  add(std::move(E));
}

void TraceWriter::opaqueHold(const std::string &Name,
                             const std::vector<unsigned> &SmIds, bool Clear) {
  nlohmann::json C = base(("opaque sms " + Name).c_str(), "opaque", "C");
  C["args"] = {{"sms", SmIds.size()}};
  nlohmann::json E = base("opaque_hold", "opaque", "i");
  E["s"] = "t";
  E["args"] = {{"partition", Name},
               {"sms", SmIds.size()},
               {"sm_ids", SmIds},
               {"clear", Clear}};
  nvtxMark("smpart opaque " + Name + " holds " + std::to_string(SmIds.size()) +
               " SMs",
           0xff606060u);
  add(std::move(C));
  add(std::move(E));
}

void TraceWriter::preempt(unsigned long long Id, const std::string &Name) {
  kernelInstant("preempt", "preempt", Id, Name, "smpart preempt ", 0xffa000a0u);
}

void TraceWriter::resume(unsigned long long Id, const std::string &Name) {
  kernelInstant("resume", "preempt", Id, Name, "smpart resume ", 0xffa000a0u);
}

void TraceWriter::note(const std::string &Category, const std::string &Text) {
  nlohmann::json E = base("note", Category.c_str(), "i");
  E["s"] = "g";
  E["args"] = {{"text", Text}};
  nvtxMark("smpart " + Text, 0xff808080u);
  add(std::move(E));
}

bool TraceWriter::flush(std::string *Error) {
  std::lock_guard<std::mutex> L(Mu);
  return writeLocked(Error);
}

bool TraceWriter::writeLocked(std::string *Error) {
  if (Special) // a reader of a FIFO sees one whole trace, at close
    return true;
  std::size_t Size = 128;
  for (const std::string &E : Events)
    Size += E.size() + 1;
  std::string Text;
  Text.reserve(Size);
  Text += "{\"traceEvents\":[";
  for (std::size_t I = 0; I < Events.size(); ++I) {
    if (I)
      Text += ',';
    Text += Events[I];
  }
  Text += "],\"displayTimeUnit\":\"ms\",\"otherData\":{\"schema\":\"";
  Text += TraceSchema;
  Text += "\"}}";
  std::string Why;
  const double Began = Now();
  Text += '\n';
  const bool Written = smpart::detail::writeOutputFile(Path, Text, &Why);
  FlushCostUs = std::max(0.0, Now() - Began);
  if (!Written) {
    if (Error)
      *Error = "trace: " + Why;
    return false;
  }
  Dirty = false;
  LastFlushUs = Now();
  return true;
}

namespace {
std::mutex GlobalMu;
std::unique_ptr<TraceWriter> &globalSlot() {
  static std::unique_ptr<TraceWriter> *W = new std::unique_ptr<TraceWriter>();
  return *W;
}
void flushGlobalAtExit() {
  std::lock_guard<std::mutex> L(GlobalMu);
  if (globalSlot())
    globalSlot()->flush();
}
} // namespace

TraceWriter *global() {
  std::lock_guard<std::mutex> L(GlobalMu);
  return globalSlot().get();
}

void setGlobal(std::unique_ptr<TraceWriter> W) {
  static bool Registered = (std::atexit(flushGlobalAtExit), true);
  (void)Registered;
  std::unique_ptr<TraceWriter> Old;
  {
    std::lock_guard<std::mutex> L(GlobalMu);
    Old = std::move(globalSlot());
    globalSlot() = std::move(W);
  }
  // Old (if any) flushes in its destructor, outside the lock.
}

} // namespace smpart::trace
