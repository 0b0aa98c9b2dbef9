// smpart::service::Client: a tenant of smpartd. Callers (the launching
// thread, the runtime's notice thread) only queue events under a mutex and
// wake the client's own thread, which owns the socket: it connects (with
// back-off, again after the service went away), says hello, registers the
// kernels that are still running, sends events and, every millisecond,
// the progress of every kernel, and applies the knobs the service sends
// to this process's kernels only. Without a service the kernels keep the
// knobs they last got and finish.
#include "smpart/service.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace smpart::service {

using nlohmann::json;

class Client::Impl {
public:
  Impl(std::string Socket, std::vector<unsigned> Ids,
       std::function<void(const std::string &)> Warn)
      : Path(std::move(Socket)), SmIds(std::move(Ids)), Warn(std::move(Warn)) {
    if (::pipe2(Wake, O_CLOEXEC | O_NONBLOCK) != 0)
      Wake[0] = Wake[1] = -1;
    Thread = std::thread([this] { loop(); });
  }
  ~Impl() {
    Stop = true;
    wake();
    Thread.join();
    if (Fd >= 0)
      ::close(Fd);
    ::close(Wake[0]);
    ::close(Wake[1]);
  }

  void post(json Msg, std::shared_ptr<KernelControl> K = nullptr) {
    {
      std::lock_guard<std::mutex> L(Mu);
      const unsigned long long Id = Msg["kernel"].get<unsigned long long>();
      if (K)
        Kernels[Id] = K;
      else if (Msg["type"] == "depart") {
        Kernels.erase(Id);
        Acks.erase(Id);
      }
      if (Connected)
        Pending += lineOf(Msg);
    }
    wake();
  }

  std::atomic<bool> Connected{false};

  /// One protocol line. Names come from the program (a partition's name
  /// may be any bytes): bytes that are not UTF-8 become U+FFFD, where
  /// dump() would throw on the launching or the client's thread.
  static std::string lineOf(const json &Msg) {
    return Msg.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  }

  /// Opaque partitions (declareOpaque): what the service must hear again
  /// after a reconnect, and what it last answered.
  struct OpaqueState {
    OpaqueTenant tenant;
    unsigned target = 0;
    std::vector<unsigned> ids; ///< the last hold sent (sorted)
    bool held = false, clear = false;
  };
  std::map<std::string, OpaqueState> Opaques; // guarded by Mu

  static json declaration(const OpaqueTenant &T) {
    return {{"type", "opaque_declare"},
            {"name", T.name},
            {"min_sms", T.min_sms},
            {"granularity", T.granularity},
            {"weight", T.weight}};
  }
  static json hold(const std::string &Name, const std::vector<unsigned> &Ids) {
    return {{"type", "opaque_hold"}, {"name", Name}, {"sm_ids", Ids}};
  }
  /// Queues \p Msg if connected (connect() re-sends the state otherwise).
  void send(const json &Msg) {
    {
      std::lock_guard<std::mutex> L(Mu);
      if (Connected)
        Pending += lineOf(Msg);
    }
    wake();
  }

  void declareOpaque(const OpaqueTenant &T) {
    {
      std::lock_guard<std::mutex> L(Mu);
      Opaques[T.name].tenant = T;
    }
    send(declaration(T));
  }
  void removeOpaque(const std::string &Name) {
    {
      std::lock_guard<std::mutex> L(Mu);
      if (!Opaques.erase(Name))
        return;
    }
    send({{"type", "opaque_remove"}, {"name", Name}});
  }
  unsigned opaqueTarget(const std::string &Name) {
    std::lock_guard<std::mutex> L(Mu);
    auto It = Opaques.find(Name);
    return It == Opaques.end() ? 0 : It->second.target;
  }
  bool holdOpaque(const std::string &Name, const std::vector<unsigned> &In) {
    std::vector<unsigned> Ids = In;
    std::sort(Ids.begin(), Ids.end());
    Ids.erase(std::unique(Ids.begin(), Ids.end()), Ids.end());
    {
      std::lock_guard<std::mutex> L(Mu);
      auto It = Opaques.find(Name);
      if (It == Opaques.end())
        return false;
      if (It->second.held && It->second.ids == Ids)
        return It->second.clear;
      It->second.ids = Ids;
      It->second.held = true;
      It->second.clear = false;
    }
    send(hold(Name, Ids));
    return false;
  }

private:
  void wake() {
    const char C = 1;
    [[maybe_unused]] ssize_t N = ::write(Wake[1], &C, 1);
  }
  void warnOnce(const std::string &M) {
    if (Warned.exchange(true))
      return;
    if (Warn)
      Warn(M);
    else
      std::fprintf(stderr, "smpart: %s\n", M.c_str());
  }

  bool connect() {
    sockaddr_un Addr{};
    Addr.sun_family = AF_UNIX;
    if (Path.size() >= sizeof Addr.sun_path) {
      warnOnce("SMPART_SERVICE=" + Path + ": a socket path is at most " +
               std::to_string(sizeof Addr.sun_path - 1) +
               " bytes; running without the service");
      return false;
    }
    std::memcpy(Addr.sun_path, Path.c_str(), Path.size() + 1);
    Fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (Fd < 0 ||
        ::connect(Fd, reinterpret_cast<sockaddr *>(&Addr), sizeof Addr) != 0) {
      warnOnce("SMPART_SERVICE=" + Path + ": " + std::strerror(errno) +
               "; running without the service until it answers");
      if (Fd >= 0)
        ::close(Fd);
      Fd = -1;
      return false;
    }
    ::fcntl(Fd, F_SETFL, ::fcntl(Fd, F_GETFL) | O_NONBLOCK);
    std::lock_guard<std::mutex> L(Mu);
    // Hello, then every kernel still running: a restarted service picks
    // this tenant up again.
    Pending = lineOf({{"type", "hello"},
                      {"protocol", kProtocol},
                      {"pid", ::getpid()},
                      {"sm_ids", SmIds}});
    for (auto &[Id, K] : Kernels)
      Pending += lineOf({{"type", "arrive"},
                         {"kernel", Id},
                         {"name", K->name()},
                         {"total", totalOf(*K)},
                         {"occupancy", K->occupancy()}});
    for (auto &[Name, P] : Opaques) {
      Pending += lineOf(declaration(P.tenant));
      P.clear = false;
      if (P.held)
        Pending += lineOf(hold(Name, P.ids));
    }
    In.clear();
    Acks.clear(); // a restarted service numbers its knob lines afresh
    Connected = true;
    return true;
  }

  static unsigned long long totalOf(const KernelControl &K) {
    ControlProgress P;
    K.progress(P);
    return P.total;
  }

  void disconnect() {
    ::close(Fd);
    Fd = -1;
    Connected = false;
    std::lock_guard<std::mutex> L(Mu);
    Pending.clear();
  }

  /// Member \p Name of \p M if it is a string, else "": json::value()
  /// throws on a member of another type, and a message from a service of
  /// another version must not end the tenant's process.
  static std::string text(const json &M, const char *Name) {
    auto It = M.find(Name);
    return It != M.end() && It->is_string() ? It->get<std::string>() : "";
  }

  void apply(const json &M) {
    const std::string Type = text(M, "type");
    if (Type == "error") {
      std::fprintf(stderr, "smpart: service: %s\n", text(M, "message").c_str());
      return;
    }
    if (Type == "opaque_target" || Type == "opaque_held") {
      applyOpaque(M);
      return;
    }
    if (Type != "knobs" || !M.contains("kernel") ||
        !M["kernel"].is_number_unsigned())
      return;
    std::shared_ptr<KernelControl> K;
    const unsigned long long Id = M["kernel"].get<unsigned long long>();
    {
      std::lock_guard<std::mutex> L(Mu);
      auto It = Kernels.find(Id);
      if (It == Kernels.end())
        return; // departed meanwhile
      K = It->second;
      if (M.contains("seq") && M["seq"].is_number_unsigned())
        Acks[Id].written = M["seq"].get<unsigned long long>();
    }
    const std::string Op = text(M, "op");
    const unsigned Value =
        M.contains("value") && M["value"].is_number_unsigned()
            ? M["value"].get<unsigned>()
            : 0;
    auto maskOf = [&](SmMask &Mask) {
      if (!M.contains("sms") || !M["sms"].is_array())
        return false;
      for (const json &S : M["sms"])
        if (S.is_number_unsigned() && S.get<unsigned long long>() < Mask.size())
          Mask.set(S.get<unsigned>());
      return Mask.any();
    };
    auto unsignedField = [&](const char *Name, unsigned &Out) {
      if (!M.contains(Name) || !M[Name].is_number_unsigned())
        return false;
      Out = M[Name].get<unsigned>();
      return true;
    };
    SmMask Mask;
    if (Op == "set") {
      KnobSet Set;
      // A malformed set is dropped whole: half a plan is worse than none.
      if (maskOf(Set.mask) && unsignedField("ctas", Set.ctas_per_sm) &&
          unsignedField("bypass", Set.bypass_ctas_per_sm) &&
          M.contains("preempt") && M["preempt"].is_boolean()) {
        Set.preempt = M["preempt"].get<bool>();
        K->setKnobs(Set);
      }
    } else if (Op == "mask" && maskOf(Mask)) {
      K->setSmMask(Mask);
    } else if (Op == "ctas" && Value) {
      K->setCtasPerSm(Value);
    } else if (Op == "bypass") {
      K->setBypassCtasPerSm(Value);
    } else if (Op == "preempt") {
      K->preempt();
    } else if (Op == "resume") {
      K->resume();
    } else if (Op == "grow") {
      K->grow();
    }
  }

  /// The service's answer about a partition: its target, and whether the
  /// SMs of the hold it names are clear (an answer about an older hold
  /// changes nothing).
  void applyOpaque(const json &M) {
    if (!M.contains("name") || !M["name"].is_string())
      return;
    std::lock_guard<std::mutex> L(Mu);
    auto It = Opaques.find(M["name"].get<std::string>());
    if (It == Opaques.end())
      return;
    if (M.contains("sms") && M["sms"].is_number_unsigned())
      It->second.target = M["sms"].get<unsigned>();
    if (text(M, "type") == "opaque_held" && M.contains("sm_ids") &&
        M["sm_ids"].is_array() && M.contains("clear") &&
        M["clear"].is_boolean()) {
      std::vector<unsigned> Ids;
      for (const json &S : M["sm_ids"])
        if (S.is_number_unsigned())
          Ids.push_back(S.get<unsigned>());
      std::sort(Ids.begin(), Ids.end());
      if (Ids == It->second.ids)
        It->second.clear = M["clear"].get<bool>();
    }
  }

  /// `applied` for every kernel whose device acknowledged the knobs the
  /// service sent since the last report: the service hands the SMs those
  /// knobs took away to other kernels only then.
  void queueAcks() {
    std::lock_guard<std::mutex> L(Mu);
    for (auto &[Id, A] : Acks) {
      if (A.reported >= A.written)
        continue;
      auto It = Kernels.find(Id);
      if (It == Kernels.end() || !It->second->knobsApplied())
        continue;
      A.reported = A.written;
      Pending +=
          lineOf({{"type", "applied"}, {"kernel", Id}, {"seq", A.written}});
    }
  }

  void queueProgress() {
    std::lock_guard<std::mutex> L(Mu);
    for (auto &[Id, K] : Kernels) {
      ControlProgress P;
      K->progress(P);
      Pending += lineOf({{"type", "progress"},
                         {"kernel", Id},
                         {"taken", P.taken},
                         {"done", P.done},
                         {"finished", P.finished}});
    }
  }

  void loop() {
    auto Backoff = std::chrono::milliseconds(20);
    auto NextProgress = std::chrono::steady_clock::now();
    while (!Stop) {
      if (Fd < 0 && !connect()) {
        pollfd W{Wake[0], POLLIN, 0};
        ::poll(&W, 1, static_cast<int>(Backoff.count()));
        drainWake();
        Backoff = std::min(Backoff * 2, std::chrono::milliseconds(1000));
        continue;
      }
      Backoff = std::chrono::milliseconds(20);
      const auto Now = std::chrono::steady_clock::now();
      if (Now >= NextProgress) {
        queueProgress();
        NextProgress = Now + std::chrono::milliseconds(1);
      }
      queueAcks();
      std::string Out;
      {
        std::lock_guard<std::mutex> L(Mu);
        Out.swap(Pending);
      }
      // A service that is alive but reads nothing must not keep this
      // thread (and the destructor that joins it) here for ever.
      while (!Out.empty() && !Stop) {
        ssize_t N = ::send(Fd, Out.data(), Out.size(), MSG_NOSIGNAL);
        if (N < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
          pollfd P{Fd, POLLOUT, 0};
          ::poll(&P, 1, 10);
          continue;
        }
        if (N < 0)
          break;
        Out.erase(0, static_cast<std::size_t>(N));
      }
      if (!Out.empty()) {
        disconnect();
        continue;
      }
      pollfd Fds[2] = {{Fd, POLLIN, 0}, {Wake[0], POLLIN, 0}};
      ::poll(Fds, 2, 1);
      drainWake();
      if ((Fds[0].revents & (POLLIN | POLLHUP | POLLERR)) && !readLines())
        disconnect();
    }
  }

  bool readLines() {
    char Buf[4096];
    for (;;) {
      ssize_t N = ::recv(Fd, Buf, sizeof Buf, 0);
      if (N == 0)
        return false;
      if (N < 0)
        return errno == EAGAIN || errno == EWOULDBLOCK;
      In.append(Buf, static_cast<std::size_t>(N));
      std::size_t Eol;
      while ((Eol = In.find('\n')) != std::string::npos) {
        json M = json::parse(In.substr(0, Eol), nullptr, false);
        In.erase(0, Eol + 1);
        if (!M.is_object())
          continue;
        try {
          apply(M);
        } catch (const std::exception &E) { // a fault here, not the service's
          std::fprintf(stderr, "smpart: service message dropped: %s\n",
                       E.what());
        }
      }
      if (In.size() > kMaxLine)
        return false;
    }
  }

  void drainWake() {
    char Buf[64];
    while (::read(Wake[0], Buf, sizeof Buf) > 0) {
    }
  }

  std::string Path;
  std::vector<unsigned> SmIds;
  std::function<void(const std::string &)> Warn;
  int Fd = -1, Wake[2] = {-1, -1};
  std::atomic<bool> Stop{false}, Warned{false};
  std::mutex Mu;
  std::map<unsigned long long, std::shared_ptr<KernelControl>> Kernels;
  struct AckState {
    unsigned long long written = 0, reported = 0; ///< knob line seqs
  };
  std::map<unsigned long long, AckState> Acks;
  std::string Pending, In;
  std::thread Thread;
};

Client::Client(std::string Socket, std::vector<unsigned> SmIds,
               std::function<void(const std::string &)> Warn)
    : I(std::make_unique<Impl>(std::move(Socket), std::move(SmIds),
                               std::move(Warn))) {}
Client::~Client() = default;

void Client::arrive(std::shared_ptr<KernelControl> K) {
  ControlProgress P;
  K->progress(P);
  I->post({{"type", "arrive"},
           {"kernel", K->id()},
           {"name", K->name()},
           {"total", P.total},
           {"occupancy", K->occupancy()}},
          K);
}
void Client::lastBlockTaken(unsigned long long Id) {
  I->post({{"type", "last_block"}, {"kernel", Id}});
}
void Client::depart(unsigned long long Id) {
  I->post({{"type", "depart"}, {"kernel", Id}});
}
bool Client::connected() const { return I->Connected; }

void Client::declareOpaque(const OpaqueTenant &T) { I->declareOpaque(T); }
void Client::removeOpaque(const std::string &Name) { I->removeOpaque(Name); }
unsigned Client::opaqueTarget(const std::string &Name) const {
  return I->opaqueTarget(Name);
}
bool Client::holdOpaque(const std::string &Name,
                        const std::vector<unsigned> &SmIds) {
  return I->holdOpaque(Name, SmIds);
}

} // namespace smpart::service
