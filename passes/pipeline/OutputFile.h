// Every file the tool writes (-o, -i, --output-dir, --manifest,
// --export-fixes, --depfile) is written here, so that each is written the
// same safe way: a regular file atomically (a reader or a build never sees
// half of it), through symlinks to their target, and never by replacing a
// device, a FIFO or /dev/stdout.
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"

#include <string>

namespace smpart {

class OutputFile {
public:
  /// Writes \p Text to \p Path ("-": standard output). A regular file (or
  /// one that does not exist yet) gets a temporary file in its own folder,
  /// renamed onto it, with the old file's permissions; a symlink is
  /// followed to its target first; anything else is opened and written as
  /// it is. On failure prints "cannot write '<Path>': <why>" and returns
  /// false.
  static bool write(llvm::StringRef Path, llvm::StringRef Text);

  /// Why \p Path cannot be written at all (its folder does not exist, it
  /// is a folder), or empty: checked before any work is done.
  static std::string problem(llvm::StringRef Path);

private:
  /// Where a write of \p Path lands: \p Path itself for special files, the
  /// end of its symlink chain otherwise.
  static std::string destination(llvm::StringRef Path, bool &Special);
  static bool fail(llvm::StringRef Path, const llvm::Twine &Why);
};

} // namespace smpart
