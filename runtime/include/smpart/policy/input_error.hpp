// One error type for every problem with user input (profile files, plan
// files, policy prerequisites). Its message is the one line smpart-plan
// prints: "FILE: JSON.PATH: what was expected" ("FILE: why" for a file
// that cannot be read: no JSON path).
#pragma once

#include <stdexcept>
#include <string>

namespace smpart::policy {

class InputError : public std::runtime_error {
public:
  InputError(std::string File, std::string Path, std::string Expected)
      : std::runtime_error(File + ": " + (Path.empty() ? "" : Path + ": ") +
                           Expected),
        File(std::move(File)), Path(std::move(Path)),
        Expected(std::move(Expected)) {}

  const std::string &file() const { return File; }
  const std::string &path() const { return Path; }
  const std::string &expected() const { return Expected; }

private:
  std::string File;
  std::string Path;
  std::string Expected;
};

} // namespace smpart::policy
