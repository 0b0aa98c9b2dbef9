// The opaque-partition messages of smpart.service/1 (docs/service.md):
// a tenant declares partitions of work smpart cannot rewrite (library
// calls, refused kernels, confined by green contexts in the tenant), holds
// the SMs the driver gave a launch, and removes them. Parsing and
// validation only, so the server's loop stays as it is.
#pragma once

#include "smpart/controller.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace smpart::service::detail {

struct OpaqueMessage {
  enum Kind { Declare, Hold, Remove } kind = Declare;
  /// Declare: every field; Hold and Remove: the name.
  OpaqueTenant tenant;
  /// Hold: the real SM ids the partition's launch runs on.
  std::vector<unsigned> sm_ids;
};

/// The message types this file understands.
inline const char *const OpaqueTypes[] = {"opaque_declare", "opaque_hold",
                                          "opaque_remove"};
bool isOpaqueType(const std::string &Type);

/// Parses message \p J of type \p Type. False, with one line in \p Why
/// naming the type and the JSON path of the field at fault
/// (`opaque_hold: sm_ids[2]: expected an SM id (0 to 511), got -1`).
bool parseOpaque(const std::string &Type, const nlohmann::json &J,
                 OpaqueMessage &Out, std::string &Why);

} // namespace smpart::service::detail
