// smpartd: one smpart::Controller for the kernels of several processes, on
// a Unix socket (SiM's host-side service). CUDA-free: the service never
// touches a GPU; each client applies the decisions to its own kernels.
// Protocol `smpart.service/1`: one JSON object per line (docs/service.md).
//
//   service::Server   the service (tool/smpartd is its main)
//   service::Client   a tenant: registers kernels, reports progress,
//                     applies the knobs the service sends back
#pragma once

#include "smpart/controller.hpp"
#include "smpart/kernel_control.hpp"

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <sys/types.h>

namespace smpart::service {

inline constexpr const char *kProtocol = "smpart.service/1";
/// A line longer than this closes the connection (a hostile client).
inline constexpr std::size_t kMaxLine = 64 * 1024;

/// Why \p Id cannot follow the SM ids \p Seen in a list of SM ids (out of
/// range 0 to kMaxSms - 1, or listed twice); empty when it can. One check
/// for hello's `sm_ids` and smpartd's `--sm-ids`.
std::string smIdError(unsigned long long Id, const std::vector<unsigned> &Seen);

struct ServerOptions {
  std::string socket; ///< path of the Unix socket
  /// Any of smpart-plan's policies, or an online one
  /// (smpart::online::onlinePolicies(): arrivals planned by its offline
  /// base, corrected every epoch).
  std::string policy = "even";
  std::string profiles;         ///< smpart.profiles/1 (not for even)
  std::string trace;            ///< trace file, optional
  std::vector<unsigned> sm_ids; ///< empty: from the first tenant
  /// The service closes the controller's epochs this often (SMPART_EPOCH_US
  /// of libsmpart), while tenants have kernels; MinEpochUs to 10 s.
  double epoch_us = DefaultEpochUs;
  unsigned mode = 0600;          ///< socket permissions
  std::vector<uid_t> allow_uids; ///< besides the service's own uid
  /// A connection that has not said hello by then is closed, so idle
  /// sockets cannot hold the service's file descriptors.
  std::chrono::milliseconds hello_timeout{5000};
  std::function<void(const std::string &)> log; ///< default: stderr
};

class Server {
public:
  /// Validates the options, loads the profiles and binds the socket. On
  /// failure returns null and one line in \p Error.
  static std::unique_ptr<Server> open(ServerOptions Options,
                                      std::string *Error);
  ~Server(); ///< closes every connection and removes the socket
  Server(const Server &) = delete;
  Server &operator=(const Server &) = delete;

  /// Serves until stop().
  void run();
  /// Makes run() return; async-signal-safe (SIGTERM handlers call it).
  void stop();

  /// Kernels of every tenant as the controller last applied them.
  std::vector<KernelAllocation> allocations() const;
  /// Connected tenants.
  std::size_t tenants() const;

  class Impl;

private:
  explicit Server(std::unique_ptr<Impl> I);
  std::unique_ptr<Impl> I;
};

class Client {
public:
  /// Connects in the background (and again after the service went away,
  /// with back-off); \p SmIds are sent in the hello. Never blocks a caller.
  Client(std::string Socket, std::vector<unsigned> SmIds,
         std::function<void(const std::string &)> Warn = {});
  ~Client();
  Client(const Client &) = delete;
  Client &operator=(const Client &) = delete;

  /// A kernel of this process arrives: the service plans it and the knobs
  /// it decides are applied to \p Kernel.
  void arrive(std::shared_ptr<KernelControl> Kernel);
  void lastBlockTaken(unsigned long long Id);
  void depart(unsigned long long Id);
  bool connected() const;

  /// Opaque partitions of this process (docs/service.md), declared to the
  /// service now and again after a reconnect.
  void declareOpaque(const OpaqueTenant &T);
  void removeOpaque(const std::string &Name);
  /// The target the service last sent (0 before it answered).
  unsigned opaqueTarget(const std::string &Name) const;
  /// A launch boundary: sends the hold when \p SmIds changed; true once
  /// the service said every kernel left them. Idempotent; poll it.
  bool holdOpaque(const std::string &Name, const std::vector<unsigned> &SmIds);

  class Impl;

private:
  std::unique_ptr<Impl> I;
};

} // namespace smpart::service
