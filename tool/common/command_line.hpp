// The command line of smpart's plain C++ binaries (smpart-plan,
// smpart-profile, smpartd), with the conventions every smpart binary
// follows, smpart-transform's llvm::cl included:
//   --name VALUE and --name=VALUE; the output file is -o FILE;
//   --help prints the full help on stdout and exits 0;
//   --version prints "<tool> version <project version>" and exits 0;
//   bad usage (unknown option, bad value, missing value) prints
//     "<tool>: error: <problem>" and "<tool>: see '<tool> --help'" on
//     stderr and exits 2; a job that fails exits 1.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace smpart::cli {

/// Exit status of every smpart binary.
enum ExitCode : int { ExitSuccess = 0, ExitFailure = 1, ExitUsage = 2 };

class CommandLine {
public:
  using Setter = std::function<void(const std::string &Value)>;

  /// \p Tool names the binary in messages; \p Help is what --help prints;
  /// \p VersionExtra is appended to the --version line.
  CommandLine(std::string Tool, std::string Help,
              std::string VersionExtra = "");

  /// A flag without a value ("--explain").
  void flag(const std::string &Name, bool &Seen);
  /// An option with a value; \p Set may call usageError() for a bad value.
  /// It is called once per occurrence.
  void option(const std::string &Name, Setter Set);
  /// An option with a value that may be given once.
  void option(const std::string &Name, std::optional<std::string> &Value);
  /// An old spelling that still works but warns, naming \p Current.
  void deprecatedAlias(const std::string &Old, const std::string &Current);
  /// Accepts positional arguments (none are accepted otherwise).
  void positional(Setter Add);

  /// Parses Argv[1..Argc); handles --help and --version (exit 0) and exits
  /// 2 on bad usage.
  void parse(int Argc, char **Argv);

  /// "<tool>: error: <Message>" plus the hint line; exit 2.
  [[noreturn]] void usageError(const std::string &Message) const;
  /// "<tool>: error: <Message>"; returns ExitFailure for `return fail(..)`.
  int fail(const std::string &Message) const;
  /// "<tool>: warning: <Message>".
  void warn(const std::string &Message) const;

  /// Writes a tool's result: to the standard output when \p Out is unset
  /// or "-" (a failed write is an error), else to the file, atomically
  /// (smpart/detail/output_file.hpp), unless it is one of \p Inputs (the
  /// same file by any path). ExitSuccess, or ExitFailure after the error
  /// line.
  int writeOutput(const std::optional<std::string> &Out,
                  const std::string &Text,
                  const std::vector<std::string> &Inputs) const;

  const std::string &tool() const { return Tool; }

private:
  struct Spec {
    std::string Name;
    bool TakesValue = false;
    Setter Set;
    std::string AliasOf; // deprecated spelling of this option
    bool Hidden = false;
  };
  const Spec *find(const std::string &Name) const;
  std::string suggest(const std::string &Name) const;

  std::string Tool, Help, VersionExtra;
  std::vector<Spec> Specs;
  Setter Positional;
};

} // namespace smpart::cli
