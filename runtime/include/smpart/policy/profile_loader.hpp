// Reads `smpart.profiles/1` documents. Every problem (malformed JSON, wrong
// schema, wrong type, out-of-range value, non-monotone curve, more kernels
// than SMs) becomes one InputError naming the file and the JSON path.
#pragma once

#include "smpart/policy/profile.hpp"

#include <cstddef>
#include <string>

namespace smpart::policy {

inline constexpr const char *ProfilesSchema = "smpart.profiles/1";

/// Parses \p Text; \p Source is the name used in error messages.
ProfileSet parseProfiles(const std::string &Text, const std::string &Source);

/// Reads and parses the file at \p Path.
ProfileSet loadProfiles(const std::string &Path);

/// Profiles, plans and ncu exports are kilobytes to megabytes. A path that
/// names something endless (/dev/zero, a pipe that never closes) is
/// refused once this much was read, instead of filling the memory.
inline constexpr std::size_t MaxTextFileBytes = std::size_t{256} << 20;

/// Reads a whole file or throws InputError(Path, "", why): "p: No such
/// file or directory", "p: expected a file, got a folder", "p: larger than
/// 256 MiB".
std::string readTextFile(const std::string &Path,
                         std::size_t MaxBytes = MaxTextFileBytes);

} // namespace smpart::policy
