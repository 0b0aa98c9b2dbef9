// Reads `smpart.profiles/1` documents. Every problem (malformed JSON, wrong
// schema, wrong type, out-of-range value, non-monotone curve, more kernels
// than SMs) becomes one InputError naming the file and the JSON path.
#pragma once

#include "smpart/policy/profile.hpp"

#include <string>

namespace smpart::policy {

inline constexpr const char *ProfilesSchema = "smpart.profiles/1";

/// Parses \p Text; \p Source is the name used in error messages.
ProfileSet parseProfiles(const std::string &Text, const std::string &Source);

/// Reads and parses the file at \p Path.
ProfileSet loadProfiles(const std::string &Path);

/// Reads a whole file or throws InputError(Path, "", why): "p: No such
/// file or directory", "p: expected a JSON file, got a folder".
std::string readTextFile(const std::string &Path);

} // namespace smpart::policy
