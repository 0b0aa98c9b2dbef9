#include "command_line.hpp"

#include "smpart/detail/edit_distance.hpp"
#include "smpart/detail/output_file.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include <sys/stat.h>

namespace smpart::cli {

CommandLine::CommandLine(std::string Tool, std::string Help,
                         std::string VersionExtra)
    : Tool(std::move(Tool)), Help(std::move(Help)),
      VersionExtra(std::move(VersionExtra)) {}

void CommandLine::flag(const std::string &Name, bool &Seen) {
  Specs.push_back(
      {Name, false, [&Seen](const std::string &) { Seen = true; }, "", false});
}

void CommandLine::option(const std::string &Name, Setter Set) {
  Specs.push_back({Name, true, std::move(Set), "", false});
}

void CommandLine::option(const std::string &Name,
                         std::optional<std::string> &Value) {
  option(Name, [this, Name, &Value](const std::string &V) {
    if (Value)
      usageError("option '" + Name + "' given more than once");
    // `--profiles=` or `-o ''` (an unset shell variable) names no file.
    if (V.empty())
      usageError("option '" + Name + "' needs a value, not an empty one");
    Value = V;
  });
}

void CommandLine::deprecatedAlias(const std::string &Old,
                                  const std::string &Current) {
  const Spec *Target = find(Current);
  if (!Target)
    return;
  Specs.push_back({Old, Target->TakesValue, Target->Set, Current, true});
}

void CommandLine::positional(Setter Add) { Positional = std::move(Add); }

const CommandLine::Spec *CommandLine::find(const std::string &Name) const {
  for (const Spec &S : Specs)
    if (S.Name == Name)
      return &S;
  return nullptr;
}

std::string CommandLine::suggest(const std::string &Name) const {
  // The closest visible option, compared without dashes ("--out" is two
  // edits from "-o"), if it is close enough to be a typo.
  auto Bare = [](const std::string &S) {
    return S.substr(std::min(S.find_first_not_of('-'), S.size()));
  };
  std::vector<std::string> Names = {"--help", "--version"};
  for (const Spec &S : Specs)
    if (!S.Hidden)
      Names.push_back(S.Name);
  std::string Best;
  unsigned BestDistance = 3;
  for (const std::string &N : Names) {
    unsigned D = smpart::detail::editDistance(Bare(Name), Bare(N));
    if (D < BestDistance) {
      BestDistance = D;
      Best = N;
    }
  }
  return Best;
}

void CommandLine::parse(int Argc, char **Argv) {
  bool OnlyPositional = false;
  for (int I = 1; I < Argc; ++I) {
    const std::string Arg = Argv[I];
    if (OnlyPositional || Arg.size() < 2 || Arg[0] != '-') {
      if (!Positional)
        usageError("unexpected argument '" + Arg + "'");
      Positional(Arg);
      continue;
    }
    if (Arg == "--") {
      OnlyPositional = true;
      continue;
    }
    if (Arg == "--help" || Arg == "-h") {
      std::cout << Help;
      std::exit(ExitSuccess);
    }
    if (Arg == "--version") {
      std::cout << Tool << " version " << SMPART_VERSION << VersionExtra
                << "\n";
      std::exit(ExitSuccess);
    }
    const std::size_t Eq = Arg.find('=');
    const std::string Name = Arg.substr(0, Eq);
    const Spec *S = find(Name);
    if (!S) {
      std::string Hint = suggest(Name);
      usageError("unknown option '" + Name + "'" +
                 (Hint.empty() ? "" : "; did you mean '" + Hint + "'?"));
    }
    std::string Value;
    if (!S->TakesValue) {
      if (Eq != std::string::npos)
        usageError("option '" + Name + "' takes no value");
    } else if (Eq != std::string::npos) {
      Value = Arg.substr(Eq + 1);
    } else {
      // "--policy --profiles x": the value is missing, not "--profiles".
      const std::string Next = I + 1 < Argc ? Argv[I + 1] : "";
      if (I + 1 >= Argc ||
          (Next.size() > 1 && Next[0] == '-' &&
           (find(Next.substr(0, Next.find('='))) || Next == "--help")))
        usageError("option '" + Name + "' needs a value");
      Value = Argv[++I];
    }
    if (!S->AliasOf.empty())
      warn("'" + S->Name + "' is deprecated; use '" + S->AliasOf + "'");
    S->Set(Value);
  }
}

void CommandLine::usageError(const std::string &Message) const {
  std::cerr << Tool << ": error: " << Message << "\n"
            << Tool << ": see '" << Tool << " --help'\n";
  std::exit(ExitUsage);
}

int CommandLine::fail(const std::string &Message) const {
  std::cerr << Tool << ": error: " << Message << "\n";
  return ExitFailure;
}

void CommandLine::warn(const std::string &Message) const {
  std::cerr << Tool << ": warning: " << Message << "\n";
}

int CommandLine::writeOutput(const std::optional<std::string> &Out,
                             const std::string &Text,
                             const std::vector<std::string> &Inputs) const {
  if (!Out || *Out == "-") {
    // A full disk or a closed pipe is a failed job, not a success.
    if (std::fwrite(Text.data(), 1, Text.size(), stdout) != Text.size() ||
        std::fflush(stdout) != 0)
      return fail(std::string("cannot write the standard output: ") +
                  std::strerror(errno));
    return ExitSuccess;
  }
  if (const std::string In = detail::inputReplacedBy(*Out, Inputs); !In.empty())
    return fail("cannot write '" + *Out + "': it is '" + In +
                "', an input of this run");
  std::string Why;
  if (!detail::writeOutputFile(*Out, Text, &Why))
    return fail(Why);
  return ExitSuccess;
}

} // namespace smpart::cli
