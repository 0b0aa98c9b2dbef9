// Every file one run of the tool would write, gathered before any is
// written: a multi-file run is all or nothing, like a build step, and two
// inputs that would write one destination differently are an error that
// names both.
#pragma once

#include "llvm/ADT/StringRef.h"

#include <set>
#include <string>
#include <vector>

namespace smpart {

class OutputSet {
public:
  /// \p Text is the rewrite of \p Source (canonical name) made by the parse
  /// of \p Input, to be written to \p Destination ("-": standard output).
  void add(std::string Destination, std::string Text, std::string Source,
           std::string Input);
  /// What the depfile's rule makes, and what it depends on.
  void addTarget(std::string Target) { Targets.push_back(std::move(Target)); }
  void addDependency(std::string Path) { Dependencies.insert(std::move(Path)); }
  template <typename Range> void addDependencies(const Range &Paths) {
    Dependencies.insert(Paths.begin(), Paths.end());
  }

  bool empty() const { return Writes.empty(); }

  /// Prints an error for every destination two writes disagree on (a
  /// header shared by several files is rewritten the same way each time;
  /// under --output-dir two sources of one name meet at one file). Returns
  /// false if there was one.
  bool checkCollisions() const;

  /// Writes every destination once; under \p OutputDir (if given), makes
  /// the folder of each first. The folders are made only now, so that a
  /// failed run leaves none behind.
  bool write(llvm::StringRef OutputDir) const;

  /// `out.cu: in.cu header.cuh ...`, as the compiler's -MD writes it, so a
  /// build system re-runs the rewrite when any of them changes. Nothing is
  /// written when no target was added.
  bool writeDepFile(llvm::StringRef Path) const;

private:
  struct PendingWrite {
    std::string Destination, Text;
    std::string Source; ///< the file rewritten (canonical name)
    std::string Input;  ///< the input whose parse rewrote it
  };
  std::vector<PendingWrite> Writes;
  std::vector<std::string> Targets;
  std::set<std::string> Dependencies;
};

} // namespace smpart
