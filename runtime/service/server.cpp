// smpart::service::Server: one poll() loop on one thread owns the listening
// socket, every tenant connection and the controller, so no lock guards
// the connection state; allocations() reads the controller (thread-safe).
// The same thread closes the controller's epochs on its clock (poll's
// timeout), so an online policy's knob lines are queued like any other.
// Each tenant kernel is a RemoteKernel: knob calls become lines queued to
// its own connection (never another's), progress is what the tenant last
// reported (no round trip while the controller plans).
#include "smpart/service.hpp"

#include "online_policies.hpp"
#include "opaque_messages.hpp"

#include "smpart/control.hpp"
#include "smpart/detail/epoch_schedule.hpp"
#include "smpart/detail/output_file.hpp"
#include "smpart/policy/input_error.hpp"
#include "smpart/policy/profile_loader.hpp"
#include "smpart/trace.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <map>
#include <mutex>

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

namespace smpart::service {

using nlohmann::json;

namespace {

/// Replies queued for a tenant that reads none: past this it is dropped.
constexpr std::size_t kMaxQueued = std::size_t{1} << 20;
/// Opaque partitions one tenant may declare (a green context each).
constexpr std::size_t kMaxOpaquePerTenant = 64;
/// The longest kernel name an arrive may give.
constexpr std::size_t kMaxKernelName = 4096;
/// Bytes read from one tenant per poll round.
constexpr std::size_t kReadPerRound = 64 * 1024;
/// Out of file descriptors, the listening socket stays readable: it is
/// left alone this long (else poll() returns at once, forever).
constexpr std::chrono::milliseconds kAcceptPause{100};

struct Connection;

/// A tenant's kernel as the controller sees it.
class RemoteKernel : public KernelControl {
public:
  RemoteKernel(Connection &C, unsigned long long Global,
               unsigned long long Local, std::string Name, unsigned Occ)
      : C(&C), Global(Global), Local(Local), Name(std::move(Name)), Occ(Occ) {}
  unsigned long long id() const override { return Global; }
  std::string name() const override { return Name; }
  unsigned occupancy() const override { return Occ; }
  Status setSmMask(const SmMask &M) override {
    return send({{"op", "mask"}, {"sms", smIds(M)}});
  }
  Status setCtasPerSm(unsigned N) override {
    return send({{"op", "ctas"}, {"value", N}});
  }
  Status setBypassCtasPerSm(unsigned N) override {
    return send({{"op", "bypass"}, {"value", N}});
  }
  Status preempt() override { return send({{"op", "preempt"}}); }
  Status setKnobs(const KnobSet &S) override {
    return send({{"op", "set"},
                 {"sms", smIds(S.mask)},
                 {"ctas", S.ctas_per_sm},
                 {"bypass", S.bypass_ctas_per_sm},
                 {"preempt", S.preempt}});
  }
  Status resume() override { return send({{"op", "resume"}}); }
  Status grow() override { return send({{"op", "grow"}}); }
  Status progress(ControlProgress &Out) const override {
    Out = Last;
    return {};
  }
  /// The tenant reported (`applied`) that its device acknowledged every
  /// knob line sent so far; a departed tenant's kernels hold nothing.
  bool knobsApplied() const override { return !C || AppliedSeq >= SentSeq; }

  Connection *C; ///< null once the tenant left
  unsigned long long Global, Local;
  std::string Name;
  unsigned Occ;
  ControlProgress Last;
  unsigned long long SentSeq = 0, AppliedSeq = 0;

private:
  Status send(json Msg);
};

struct Connection {
  int fd = -1;
  pid_t pid = 0;
  uid_t uid = 0;
  bool hello = false;
  std::chrono::steady_clock::time_point accepted;
  std::string in, out;
  std::map<unsigned long long, std::shared_ptr<RemoteKernel>>
      kernels; // by local id
  /// Opaque partitions the tenant declared: the target it last heard, and
  /// the SM ids of a hold it has not yet been told are clear.
  struct Opaque {
    unsigned target = 0;
    bool waiting = false;
    std::vector<unsigned> ids;
  };
  std::map<std::string, Opaque> opaque;
  void queue(const json &Msg) {
    out += Msg.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  }
};

Status RemoteKernel::send(json Msg) {
  if (!C)
    return Status(Errc::kInvalidArgument, "tenant gone");
  Msg["type"] = "knobs";
  Msg["kernel"] = Local;
  Msg["seq"] = ++SentSeq;
  C->queue(Msg);
  return {};
}

void setNonBlocking(int Fd) {
  fcntl(Fd, F_SETFL, fcntl(Fd, F_GETFL) | O_NONBLOCK);
}

} // namespace

std::string smIdError(unsigned long long Id,
                      const std::vector<unsigned> &Seen) {
  if (Id >= kMaxSms)
    return "expected an SM id (0 to " + std::to_string(kMaxSms - 1) +
           "), got " + std::to_string(Id);
  if (std::find(Seen.begin(), Seen.end(), Id) != Seen.end())
    return "SM " + std::to_string(Id) + " is listed twice";
  return "";
}

class Server::Impl {
public:
  ServerOptions Opts;
  const policy::Policy *Pol = nullptr;
  const online::OnlinePolicyInfo *Online = nullptr; ///< null: offline only
  policy::ProfileSet Profiles;
  std::unique_ptr<trace::TraceWriter> Trace;
  std::unique_ptr<Controller> Ctl;
  std::vector<unsigned> CtlSms; // the SM ids Ctl plans on
  int Listen = -1, Wake[2] = {-1, -1};
  /// Until then the listening socket is not polled (kAcceptPause).
  std::chrono::steady_clock::time_point AcceptPausedUntil{};
  std::map<int, std::unique_ptr<Connection>> Conns;
  unsigned long long NextId = 1;
  mutable std::mutex Mu; // Ctl creation and Conns.size() for other threads

  void log(const std::string &M) {
    if (Opts.log)
      Opts.log(M);
    else
      std::fprintf(stderr, "smpartd: %s\n", M.c_str());
  }

  void ensureController(const std::vector<unsigned> &Ids) {
    std::lock_guard<std::mutex> L(Mu);
    if (Ctl || Ids.empty())
      return;
    ControllerOptions O;
    O.trace = Trace.get();
    O.warn = [this](const std::string &W) { log(W); };
    O.epoch_us = Opts.epoch_us;
    if (Online) {
      // As libsmpart does for SMPART_POLICY: the online policy plans on
      // the SMs the controller has.
      policy::ProfileSet Copy = Profiles;
      Copy.gpu.num_sms = static_cast<int>(Ids.size());
      O.online = online::makeOnlinePolicy(*Online, std::move(Copy), {});
    }
    Ctl = std::make_unique<Controller>(*Pol, Profiles, Ids, O);
    CtlSms = Ids;
    log("planning with " +
        (Online ? std::string(Online->name) +
                      " (arrivals: " + std::string(Pol->name()) + ")"
                : std::string(Pol->name())) +
        " on " + std::to_string(Ids.size()) + " SMs");
  }

  /// Tenant kernels the controller plans: epochs run while there are any.
  bool anyKernels() const {
    for (const auto &[Fd, C] : Conns)
      if (!C->kernels.empty())
        return true;
    return false;
  }

  void accept() {
    int Fd = ::accept(Listen, nullptr, nullptr);
    if (Fd < 0) {
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
          errno == ENOMEM) {
        if (AcceptPausedUntil < std::chrono::steady_clock::now())
          log(std::string("cannot accept a tenant: ") + std::strerror(errno) +
              " (" + std::to_string(Conns.size()) +
              " connections); trying again in 100 ms");
        AcceptPausedUntil = std::chrono::steady_clock::now() + kAcceptPause;
      }
      return;
    }
    ucred Cred{};
    socklen_t Len = sizeof(Cred);
    if (getsockopt(Fd, SOL_SOCKET, SO_PEERCRED, &Cred, &Len) != 0) {
      ::close(Fd);
      return;
    }
    bool Allowed = Cred.uid == geteuid();
    for (uid_t U : Opts.allow_uids)
      Allowed |= U == Cred.uid;
    auto C = std::make_unique<Connection>();
    C->fd = Fd;
    C->accepted = std::chrono::steady_clock::now();
    C->pid = Cred.pid;
    C->uid = Cred.uid;
    setNonBlocking(Fd);
    if (!Allowed) {
      C->queue({{"type", "error"},
                {"message", "uid " + std::to_string(Cred.uid) +
                                " may not use this service (--allow-uid)"}});
      flush(*C);
      ::close(Fd);
      log("refused pid " + std::to_string(Cred.pid) + " (uid " +
          std::to_string(Cred.uid) + ")");
      return;
    }
    std::lock_guard<std::mutex> L(Mu);
    Conns[Fd] = std::move(C);
  }

  /// False when the connection must be dropped.
  bool flush(Connection &C) {
    while (!C.out.empty()) {
      ssize_t N = ::send(C.fd, C.out.data(), C.out.size(), MSG_NOSIGNAL);
      if (N < 0)
        return errno == EAGAIN || errno == EWOULDBLOCK;
      C.out.erase(0, static_cast<std::size_t>(N));
    }
    return true;
  }

  void drop(int Fd) {
    auto It = Conns.find(Fd);
    if (It == Conns.end())
      return;
    Connection &C = *It->second;
    for (auto &[Local, K] : C.kernels) {
      K->C = nullptr;
      if (Ctl)
        Ctl->onDeparture(K->Global);
    }
    for (auto &[Name, P] : C.opaque)
      if (Ctl)
        Ctl->removeOpaque(Name);
    if (!C.kernels.empty())
      log("tenant pid " + std::to_string(C.pid) + " left; " +
          std::to_string(C.kernels.size()) + " kernel(s) departed");
    ::close(Fd);
    std::lock_guard<std::mutex> L(Mu);
    Conns.erase(It);
  }

  void error(Connection &C, const std::string &M) {
    C.queue({{"type", "error"}, {"message", M}});
  }

  /// \p J's unsigned \p Key into \p Out. False, with an error naming the
  /// message type and the field queued, when it is missing or mistyped.
  bool getId(Connection &C, const json &J, const std::string &Type,
             const char *Key, unsigned long long &Out,
             const char *What = "an unsigned count") {
    auto It = J.find(Key);
    if (It == J.end() || !It->is_number_unsigned()) {
      error(C, Type + ": " + Key + ": expected " + What +
                   (It == J.end() ? ", missing" : ", got " + quote(*It)));
      return false;
    }
    Out = It->get<unsigned long long>();
    return true;
  }

  /// A tenant's text as an error message quotes it: at most 40 bytes
  /// (queue() replaces a multi-byte character this cuts).
  static std::string shorten(std::string S) {
    return S.size() > 40 ? S.substr(0, 37) + "..." : S;
  }
  static std::string quote(const json &V) { return shorten(V.dump()); }

  /// The hello's `sm_ids` into \p Ids (left empty when absent). False, with
  /// what is wrong in \p Why, when present but not a list of distinct SM ids.
  static bool helloSmIds(const json &J, std::vector<unsigned> &Ids,
                         std::string &Why) {
    auto It = J.find("sm_ids");
    if (It == J.end())
      return true;
    if (!It->is_array()) {
      Why = "hello: sm_ids: expected an array of SM ids, got " + quote(*It);
      return false;
    }
    if (It->empty()) {
      Why = "hello: sm_ids: empty; expected the GPU's SM ids";
      return false;
    }
    for (std::size_t I = 0; I < It->size(); ++I) {
      const json &V = (*It)[I];
      const std::string Where = "hello: sm_ids[" + std::to_string(I) + "]: ";
      if (!V.is_number_unsigned()) {
        Why = Where + "expected an SM id (0 to " + std::to_string(kMaxSms - 1) +
              "), got " + quote(V);
        return false;
      }
      const std::string Bad = smIdError(V.get<unsigned long long>(), Ids);
      if (!Bad.empty()) {
        Why = Where + Bad;
        return false;
      }
      Ids.push_back(V.get<unsigned>());
    }
    return true;
  }

  /// The first line of a connection. False: close it.
  bool hello(Connection &C, const json &J) {
    if (!J.is_object() || J.value("type", json()) != "hello") {
      error(C, std::string("expected {\"type\":\"hello\",\"protocol\":\"") +
                   kProtocol + "\"} first");
      return false;
    }
    if (J.value("protocol", json()) != kProtocol) {
      auto P = J.find("protocol");
      error(C, std::string("hello: protocol: expected \"") + kProtocol +
                   "\", got " + (P == J.end() ? "none" : quote(*P)));
      return false;
    }
    std::vector<unsigned> Ids;
    std::string Why;
    if (!helloSmIds(J, Ids, Why)) {
      error(C, Why);
      return false;
    }
    ensureController(Opts.sm_ids.empty() ? Ids : Opts.sm_ids);
    if (!Ctl) {
      error(C, "no SM ids: give --sm-ids to smpartd or sm_ids in hello");
      return false;
    }
    // Planned on SMs it does not have, its kernels would get none.
    if (!Ids.empty() && std::none_of(Ids.begin(), Ids.end(), [&](unsigned Id) {
          return std::find(CtlSms.begin(), CtlSms.end(), Id) != CtlSms.end();
        })) {
      std::string Have;
      for (unsigned Id : CtlSms)
        Have += (Have.empty() ? "" : ", ") + std::to_string(Id);
      error(C, "hello: sm_ids: none of the tenant's SMs is among the "
               "service's (" +
                   shorten(Have) + ")");
      return false;
    }
    C.hello = true;
    C.queue({{"type", "welcome"}, {"protocol", kProtocol}});
    return true;
  }

  /// One line from a tenant. False: close the connection.
  bool handle(Connection &C, const std::string &Line) {
    json J;
    try {
      J = json::parse(Line);
    } catch (const json::exception &E) { // parse_error, out_of_range
      if (!C.hello)
        return hello(C, J);
      // "[json.exception.parse_error.101] parse error at line 1, column 19:
      // ..." or "[json.exception.out_of_range.406] number overflow parsing
      // '1e400'", without the library's tag.
      std::string Why = E.what();
      if (const size_t Tag = Why.find("] "); Tag != std::string::npos)
        Why.erase(0, Tag + 2);
      if (Why.size() > 200)
        Why = Why.substr(0, 197) + "...";
      error(C, "not JSON: " + Why);
      return true;
    }
    // Before the hello nothing else is understood (docs/service.md).
    if (!C.hello)
      return hello(C, J);
    if (!J.is_object() || !J.contains("type") || !J["type"].is_string()) {
      error(C, "expected a JSON object with a string \"type\"");
      return true;
    }
    const std::string Type = J["type"].get<std::string>();
    if (Type == "hello") {
      error(C, "hello: already received on this connection; send it once, "
               "first");
      return true;
    }
    if (detail::isOpaqueType(Type))
      return handleOpaque(C, Type, J);
    static const char *const Types[] = {"arrive", "progress", "last_block",
                                        "applied", "depart"};
    if (std::find(std::begin(Types), std::end(Types), Type) ==
        std::end(Types)) {
      error(C, "unknown message type '" + shorten(Type) +
                   "' (expected one of arrive, progress, last_block, "
                   "applied, depart, opaque_declare, opaque_hold, "
                   "opaque_remove)");
      return true;
    }
    unsigned long long Local = 0;
    if (!getId(C, J, Type, "kernel", Local, "an unsigned id"))
      return true;
    auto It = C.kernels.find(Local);
    if (Type == "arrive") {
      if (It != C.kernels.end()) {
        error(C,
              "arrive: kernel " + std::to_string(Local) + " already arrived");
        return true;
      }
      auto Name = J.find("name");
      unsigned long long Total = 0, Occ = 0;
      if (Name == J.end() || !Name->is_string()) {
        error(C, "arrive: name: expected a string, got " +
                     (Name == J.end() ? std::string("none") : quote(*Name)));
        return true;
      }
      // A name goes into every trace event and log line of the kernel: a
      // kernel's name, not 60 KiB or a forged log line.
      const std::string &Text = Name->get_ref<const std::string &>();
      if (Text.empty() || Text.size() > kMaxKernelName ||
          std::any_of(Text.begin(), Text.end(), [](char Ch) {
            return static_cast<unsigned char>(Ch) < 0x20 || Ch == 0x7f;
          })) {
        error(C, "arrive: name: expected a kernel name (1 to " +
                     std::to_string(kMaxKernelName) +
                     " bytes, no control characters)");
        return true;
      }
      if (!getId(C, J, Type, "total", Total) ||
          !getId(C, J, Type, "occupancy", Occ))
        return true;
      if (Occ > 1024) {
        error(C, "arrive: occupancy: expected 0 to 1024 CTAs per SM, got " +
                     std::to_string(Occ));
        return true;
      }
      auto K = std::make_shared<RemoteKernel>(C, NextId++, Local,
                                              Name->get<std::string>(),
                                              static_cast<unsigned>(Occ));
      K->Last.total = Total;
      C.kernels[Local] = K;
      Ctl->onArrival(K);
      return true;
    }
    if (It == C.kernels.end()) {
      error(C, Type + ": kernel " + std::to_string(Local) +
                   " is not one of yours");
      return true;
    }
    RemoteKernel &K = *It->second;
    if (Type == "progress") {
      unsigned long long Taken = 0, Done = 0;
      if (!getId(C, J, Type, "taken", Taken) ||
          !getId(C, J, Type, "done", Done))
        return true;
      auto Finished = J.find("finished");
      if (Finished != J.end() && !Finished->is_boolean()) {
        error(C, "progress: finished: expected a boolean, got " +
                     quote(*Finished));
        return true;
      }
      K.Last.taken = std::min(Taken, K.Last.total);
      K.Last.done = std::min(Done, K.Last.total);
      K.Last.finished = Finished != J.end() && Finished->get<bool>();
    } else if (Type == "last_block") {
      Ctl->onLastBlockTaken(K.Global);
    } else if (Type == "applied") {
      unsigned long long Seq = 0;
      if (!getId(C, J, Type, "seq", Seq, "a knobs line's seq"))
        return true;
      if (Seq > K.SentSeq) {
        error(C, "applied: seq: expected at most the last knobs line's (" +
                     std::to_string(K.SentSeq) + "), got " +
                     std::to_string(Seq));
        return true;
      }
      K.AppliedSeq = std::max(K.AppliedSeq, Seq);
      Ctl->onKnobsApplied(K.Global);
    } else if (Type == "depart") {
      K.C = nullptr;
      const unsigned long long Global = K.Global;
      C.kernels.erase(It);
      Ctl->onDeparture(Global);
    } else {
      error(C, "unknown message type \"" + Type + "\"");
    }
    return true;
  }

  /// opaque_declare, opaque_hold, opaque_remove (docs/service.md): a
  /// partition's name is the controller's, so a profile under it plans it;
  /// two tenants cannot share one.
  bool handleOpaque(Connection &C, const std::string &Type, const json &J) {
    detail::OpaqueMessage M;
    std::string Why;
    if (!detail::parseOpaque(Type, J, M, Why)) {
      error(C, Why);
      return true;
    }
    const std::string &Name = M.tenant.name;
    if (M.kind == detail::OpaqueMessage::Declare) {
      for (const auto &[Fd, O] : Conns)
        if (O.get() != &C && O->opaque.count(Name)) {
          error(C, Type + ": name: '" + shorten(Name) +
                       "' is another tenant's partition");
          return true;
        }
      // Every partition is planned at every epoch: a tenant declaring
      // thousands would spend the service's thread for everyone.
      if (!C.opaque.count(Name) && C.opaque.size() >= kMaxOpaquePerTenant) {
        error(C, Type + ": name: '" + shorten(Name) + "' would be your " +
                     std::to_string(kMaxOpaquePerTenant + 1) +
                     "th partition; at most " +
                     std::to_string(kMaxOpaquePerTenant) + " per tenant");
        return true;
      }
      Ctl->addOpaque(M.tenant);
      Connection::Opaque &P = C.opaque[Name];
      P.target = Ctl->opaqueTarget(Name);
      C.queue({{"type", "opaque_target"}, {"name", Name}, {"sms", P.target}});
      return true;
    }
    auto It = C.opaque.find(Name);
    if (It == C.opaque.end()) {
      error(C, Type + ": name: '" + shorten(Name) +
                   "' is not one of your partitions (opaque_declare it)");
      return true;
    }
    if (M.kind == detail::OpaqueMessage::Remove) {
      C.opaque.erase(It);
      Ctl->removeOpaque(Name);
      return true;
    }
    for (std::size_t I = 0; I < M.sm_ids.size(); ++I)
      if (std::find(CtlSms.begin(), CtlSms.end(), M.sm_ids[I]) ==
          CtlSms.end()) {
        error(C, Type + ": sm_ids[" + std::to_string(I) + "]: SM " +
                     std::to_string(M.sm_ids[I]) +
                     " is not one of the service's");
        return true;
      }
    // A tenant reports where its green context runs; it may not take more
    // than the plan gave it (its target, or its last hold while it shrinks
    // to a new target) nor another tenant's: either would preempt the
    // other tenants' kernels on its word.
    const std::size_t Allowed =
        std::max<std::size_t>(Ctl->opaqueTarget(Name), It->second.ids.size());
    if (M.sm_ids.size() > Allowed) {
      error(C, Type + ": sm_ids: " + std::to_string(M.sm_ids.size()) +
                   " SMs, more than the " + std::to_string(Allowed) +
                   " the partition may hold (its target, or its last hold)");
      return true;
    }
    for (const auto &[Fd, O] : Conns)
      for (const auto &[Other, P] : O->opaque)
        for (unsigned Id : M.sm_ids)
          if (Other != Name &&
              std::find(P.ids.begin(), P.ids.end(), Id) != P.ids.end()) {
            error(C, Type + ": sm_ids: SM " + std::to_string(Id) +
                         " is held by partition '" + shorten(Other) + "'");
            return true;
          }
    It->second.ids = M.sm_ids;
    It->second.waiting = !Ctl->holdOpaque(Name, M.sm_ids);
    C.queue({{"type", "opaque_held"},
             {"name", Name},
             {"sm_ids", M.sm_ids},
             {"clear", !It->second.waiting},
             {"sms", Ctl->opaqueTarget(Name)}});
    return true;
  }

  /// Tells tenants of targets that changed since they last heard them and
  /// of holds that became clear (the kernels leaving their SMs applied).
  void pushOpaque() {
    if (!Ctl)
      return;
    for (auto &[Fd, C] : Conns)
      for (auto &[Name, P] : C->opaque) {
        if (P.waiting && Ctl->holdOpaque(Name, P.ids)) {
          P.waiting = false;
          C->queue({{"type", "opaque_held"},
                    {"name", Name},
                    {"sm_ids", P.ids},
                    {"clear", true},
                    {"sms", Ctl->opaqueTarget(Name)}});
        }
        const unsigned T = Ctl->opaqueTarget(Name);
        if (T != P.target) {
          P.target = T;
          C->queue({{"type", "opaque_target"}, {"name", Name}, {"sms", T}});
        }
      }
  }

  /// Reads what is there, up to kReadPerRound; false when the connection
  /// must be dropped. A tenant that floods the service gets one share per
  /// poll round, the rest waits in its socket: the other tenants are
  /// served meanwhile, and its replies stop piling up at kMaxQueued.
  bool read(Connection &C) {
    char Buf[4096];
    for (std::size_t Taken = 0; Taken < kReadPerRound;) {
      if (C.out.size() > kMaxQueued)
        return true; // serve() drops it
      ssize_t N = ::recv(C.fd, Buf, sizeof Buf, 0);
      if (N == 0)
        return false;
      if (N < 0)
        return errno == EAGAIN || errno == EWOULDBLOCK;
      Taken += static_cast<std::size_t>(N);
      C.in.append(Buf, static_cast<std::size_t>(N));
      std::size_t Eol;
      while ((Eol = C.in.find('\n')) != std::string::npos) {
        if (Eol > kMaxLine)
          break; // too long, even with its end in this read
        std::string Line = C.in.substr(0, Eol);
        C.in.erase(0, Eol + 1);
        bool Keep = false;
        try {
          Keep = handle(C, Line);
        } catch (const std::exception &E) {
          // A fault of the service, not of the tenant: it loses this
          // connection (its kernels depart), the others are still served.
          log("pid " + std::to_string(C.pid) + ": " + E.what());
          error(C, std::string("internal error: ") + E.what());
        }
        if (!Keep)
          return flush(C), false;
      }
      if (C.in.size() > kMaxLine) {
        error(C, "line longer than 64 KiB");
        flush(C);
        return false;
      }
    }
    return true;
  }

  void serve() {
    using Clock = std::chrono::steady_clock;
    const auto Start = Clock::now();
    const auto Period = std::chrono::microseconds(
        static_cast<long long>(std::llround(Opts.epoch_us)));
    auto NextEpoch = Start + Period;
    bool Ticking = false;
    for (;;) {
      // Epochs tick while tenants have kernels; an idle service sleeps.
      const bool Busy = Ctl && anyKernels();
      if (Busy && !Ticking)
        NextEpoch = Clock::now() + Period;
      Ticking = Busy;
      // The next deadline: the epoch, a silent connection's hello, the
      // end of an accept pause. ppoll: an epoch under 1 ms is kept.
      auto Deadline = Clock::time_point::max();
      if (Ticking)
        Deadline = NextEpoch;
      for (auto &[Fd, C] : Conns)
        if (!C->hello)
          Deadline = std::min(Deadline, C->accepted + Opts.hello_timeout);
      const bool Paused = AcceptPausedUntil > Clock::now();
      if (Paused)
        Deadline = std::min(Deadline, AcceptPausedUntil);
      timespec Wait{};
      if (Deadline != Clock::time_point::max()) {
        const auto Ns = std::max<long long>(
            0, std::chrono::duration_cast<std::chrono::nanoseconds>(
                   Deadline - Clock::now())
                   .count());
        Wait = {static_cast<time_t>(Ns / 1000000000), Ns % 1000000000};
      }
      std::vector<pollfd> Fds = {
          {Wake[0], POLLIN, 0},
          {Listen, static_cast<short>(Paused ? 0 : POLLIN), 0}};
      for (auto &[Fd, C] : Conns)
        Fds.push_back(
            {Fd, static_cast<short>(POLLIN | (C->out.empty() ? 0 : POLLOUT)),
             0});
      if (::ppoll(Fds.data(), Fds.size(),
                  Deadline == Clock::time_point::max() ? nullptr : &Wait,
                  nullptr) < 0 &&
          errno != EINTR)
        return;
      if (Fds[0].revents)
        return;
      if (Fds[1].revents & POLLIN)
        accept();
      for (auto It = Conns.begin(); It != Conns.end();) {
        Connection &C = *It++->second;
        if (!C.hello && Clock::now() - C.accepted >= Opts.hello_timeout) {
          const std::string Why = "no hello within " +
                                  std::to_string(Opts.hello_timeout.count()) +
                                  " ms";
          error(C, Why);
          flush(C);
          log("pid " + std::to_string(C.pid) + ": " + Why);
          drop(C.fd);
        }
      }
      for (std::size_t I = 2; I < Fds.size(); ++I) {
        auto It = Conns.find(Fds[I].fd);
        if (It == Conns.end())
          continue;
        bool Keep = true;
        if (Fds[I].revents & (POLLIN | POLLHUP | POLLERR))
          Keep = read(*It->second);
        if (Keep)
          Keep = flush(*It->second);
        // A tenant that reads nothing while knobs pile up is dropped.
        if (!Keep || It->second->out.size() > kMaxQueued)
          drop(Fds[I].fd);
      }
      // Closes the epoch on the service's clock: measurements from the
      // progress tenants reported, then the online policy's step, if any.
      if (Ticking && Ctl && Clock::now() >= NextEpoch) {
        const auto Now = Clock::now();
        Ctl->epoch(
            std::chrono::duration<double, std::micro>(Now - Start).count());
        NextEpoch = smpart::detail::nextEpochDue(NextEpoch, Now, Period);
      }
      pushOpaque();
      // Knob lines queued while handling one tenant's message go to others.
      for (auto It = Conns.begin(); It != Conns.end();) {
        const int Fd = It->first;
        const bool Ok = flush(*It->second);
        ++It;
        if (!Ok)
          drop(Fd);
      }
    }
  }
};

Server::Server(std::unique_ptr<Impl> I) : I(std::move(I)) {}

std::unique_ptr<Server> Server::open(ServerOptions O, std::string *Error) {
  auto Fail = [&](const std::string &M) {
    if (Error)
      *Error = M;
    return nullptr;
  };
  std::vector<unsigned> Seen;
  for (unsigned Id : O.sm_ids) {
    const std::string Bad = smIdError(Id, Seen);
    if (!Bad.empty())
      return Fail("--sm-ids: " + Bad);
    Seen.push_back(Id);
  }
  auto I = std::make_unique<Impl>();
  I->Online = online::findOnlinePolicy(O.policy);
  I->Pol = policy::findPolicy(I->Online ? I->Online->base : O.policy);
  if (!I->Pol)
    return Fail("--policy " + O.policy + ": unknown policy");
  if (!(O.epoch_us >= MinEpochUs && O.epoch_us <= 1e7))
    return Fail("--epoch-us: expected the epoch length in microseconds, " +
                std::to_string(static_cast<int>(MinEpochUs)) + " to 10000000");
  if (!O.profiles.empty()) {
    try {
      I->Profiles = policy::loadProfiles(O.profiles);
    } catch (const policy::InputError &E) {
      return Fail(std::string("--profiles: ") + E.what());
    }
  } else if (O.policy != "even") {
    return Fail("--policy " + O.policy + " needs --profiles");
  }
  sockaddr_un Addr{};
  Addr.sun_family = AF_UNIX;
  if (O.socket.empty() || O.socket.size() >= sizeof Addr.sun_path)
    return Fail("--socket: a path of 1 to " +
                std::to_string(sizeof Addr.sun_path - 1) + " bytes");
  std::memcpy(Addr.sun_path, O.socket.c_str(), O.socket.size() + 1);
  int Fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (Fd < 0)
    return Fail(std::string("socket: ") + std::strerror(errno));
  struct stat St{};
  if (::lstat(O.socket.c_str(), &St) == 0) {
    // A socket nobody answers on is a stale one from a service that died.
    if (!S_ISSOCK(St.st_mode) ||
        ::connect(Fd, reinterpret_cast<sockaddr *>(&Addr), sizeof Addr) == 0) {
      ::close(Fd);
      return Fail(O.socket + ": in use (another service, or not a socket)");
    }
    ::unlink(O.socket.c_str());
    ::close(Fd);
    Fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  }
  // Permissions from the start: the umask covers the window before chmod.
  const mode_t Old = ::umask(0777 & ~O.mode);
  const int Bound =
      ::bind(Fd, reinterpret_cast<sockaddr *>(&Addr), sizeof Addr);
  ::umask(Old);
  if (Bound != 0 || ::chmod(O.socket.c_str(), O.mode) != 0 ||
      ::listen(Fd, 64) != 0) {
    const std::string M = O.socket + ": " + std::strerror(errno);
    ::close(Fd);
    return Fail(M);
  }
  // The trace is opened (and its file replaced) only once the service is
  // sure to start: a second service refused above leaves the first one's
  // trace alone.
  if (!O.trace.empty()) {
    std::string E;
    const std::string In =
        smpart::detail::inputReplacedBy(O.trace, std::vector{O.profiles});
    if (!In.empty()) {
      ::close(Fd);
      ::unlink(O.socket.c_str());
      return Fail("--trace: cannot write '" + O.trace + "': it is '" + In +
                  "', the --profiles file");
    }
    I->Trace = trace::TraceWriter::open(O.trace, &E);
    if (!I->Trace) {
      ::close(Fd);
      ::unlink(O.socket.c_str());
      return Fail("--trace: " + E);
    }
  }
  setNonBlocking(Fd);
  I->Listen = Fd;
  if (::pipe2(I->Wake, O_CLOEXEC | O_NONBLOCK) != 0)
    return Fail(std::string("pipe: ") + std::strerror(errno));
  I->Opts = std::move(O);
  if (!I->Opts.sm_ids.empty())
    I->ensureController(I->Opts.sm_ids);
  return std::unique_ptr<Server>(new Server(std::move(I)));
}

Server::~Server() {
  std::vector<int> Fds;
  for (auto &[Fd, C] : I->Conns)
    Fds.push_back(Fd);
  for (int Fd : Fds)
    I->drop(Fd);
  ::close(I->Listen);
  ::unlink(I->Opts.socket.c_str());
  ::close(I->Wake[0]);
  ::close(I->Wake[1]);
}

void Server::run() { I->serve(); }

void Server::stop() {
  const char C = 1;
  [[maybe_unused]] ssize_t N = ::write(I->Wake[1], &C, 1);
}

std::vector<KernelAllocation> Server::allocations() const {
  std::lock_guard<std::mutex> L(I->Mu);
  return I->Ctl ? I->Ctl->allocations() : std::vector<KernelAllocation>{};
}

std::size_t Server::tenants() const {
  std::lock_guard<std::mutex> L(I->Mu);
  return I->Conns.size();
}

} // namespace smpart::service
