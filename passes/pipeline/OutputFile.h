// Every file the tool writes (-o, -i, --output-dir, --manifest,
// --export-fixes, --depfile) is written here, so that each is written the
// same safe way: a regular file atomically (a reader or a build never sees
// half of it), through symlinks to their target, and never by replacing a
// device, a FIFO or /dev/stdout.
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/FileSystem.h"

#include <optional>
#include <string>

namespace smpart {

/// One file to write, in two phases, so that a run that writes several
/// writes all or none of them: stage() puts a regular file's text in a
/// temporary file in the target's folder (nothing the user sees changes,
/// and a full disk or a folder without write permission fails here),
/// commit() renames it onto the target with the old file's permissions. A
/// special file (a device, a FIFO, a standard stream) cannot be staged: it
/// is written only by commit(), which a run does after every stage and
/// before the renames (OutputSet::write).
class OutputFile {
public:
  OutputFile(std::string Path, std::string Text);
  OutputFile(OutputFile &&Other) noexcept;
  OutputFile &operator=(OutputFile &&) = delete;
  ~OutputFile() { discard(); }

  /// Where the write lands: the end of a regular file's symlink chain, the
  /// path itself for a special file.
  const std::string &target() const { return Target; }
  bool special() const { return Special; }

  /// On failure each prints "cannot write '<Path>': <why>" and returns
  /// false.
  bool stage();
  bool commit();
  /// Removes the staged temporary file, if any.
  void discard();

  /// Why \p Path cannot be written at all (its folder does not exist, it
  /// is a folder), or empty: checked before any work is done.
  static std::string problem(llvm::StringRef Path);

  /// Where a write of \p Path lands (target()); \p Special is set for a
  /// device, a FIFO or a standard stream.
  static std::string destination(llvm::StringRef Path, bool &Special);

private:
  /// The file descriptor \p Path names when it is a standard stream ("-",
  /// /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N): written to as
  /// it is open, never reopened, so a shell's `>>` keeps what it holds.
  static std::optional<int> streamOf(llvm::StringRef Path);
  static bool fail(llvm::StringRef Path, const llvm::Twine &Why);

  std::string Path, Text, Target;
  bool Special = false;
  std::optional<llvm::sys::fs::TempFile> Temp;
};

} // namespace smpart
