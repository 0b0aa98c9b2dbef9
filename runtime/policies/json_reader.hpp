// Typed, path-aware access to a parsed JSON document. Every accessor throws
// InputError(File, "a.b[2].c", "expected ...") so loaders never have to
// format error messages themselves.
#pragma once

#include "smpart/policy/input_error.hpp"

#include <nlohmann/json.hpp>

#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

namespace smpart::policy::detail {

class JsonNode {
public:
  JsonNode(const nlohmann::json &Value, std::string File, std::string Path)
      : Value(&Value), File(std::move(File)), Path(std::move(Path)) {}

  const nlohmann::json &value() const { return *Value; }
  const std::string &path() const { return Path; }
  const std::string &file() const { return File; }

  [[noreturn]] void fail(const std::string &Expected) const {
    throw InputError(File, Path.empty() ? "(root)" : Path, Expected);
  }

  JsonNode member(const std::string &Key) const; // requires an object
  std::optional<JsonNode> optionalMember(const std::string &Key) const;
  JsonNode element(std::size_t Index) const;
  std::size_t arraySize() const; // requires an array

  void requireObject() const;
  std::string asString() const;
  /// Integer in [Min, Max]; integral floats (8.0) are accepted.
  long long asInteger(long long Min, long long Max,
                      const char *What = "an integer") const;
  /// Finite number in [Min, Max].
  double asNumber(double Min, double Max, const char *What = "a number") const;
  /// Finite number in (0, Max]; the message says "(0, Max]" or "> 0".
  double asPositive(double Max, const char *What = "a positive number") const;

  /// "FILE: PATH.key: unknown field; ignored" for each member of this
  /// object that is not in \p Known (with the closest known name when one
  /// is a likely typo), appended to \p Warnings.
  void checkMembers(std::initializer_list<const char *> Known,
                    std::vector<std::string> &Warnings) const;

private:
  const nlohmann::json *Value;
  std::string File;
  std::string Path;
};

/// Parses \p Text, refusing nesting deeper than \p MaxDepth before the
/// parser sees it; malformed JSON becomes an InputError with line/column.
nlohmann::json parseJsonDocument(const std::string &Text,
                                 const std::string &File,
                                 unsigned MaxDepth = 64);

} // namespace smpart::policy::detail
