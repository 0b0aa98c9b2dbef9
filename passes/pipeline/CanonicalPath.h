// One name per file. Inputs reach the tool spelled many ways (`../src/k.cu`,
// `./k.cu`, through a symlinked folder, absolute) and clang's FileManager
// keeps whichever spelling opened the file first; edits, outputs and the
// main-file test must agree on which file they mean, so every comparison
// goes through the canonical name.
#pragma once

#include "llvm/ADT/StringRef.h"

#include <string>

namespace smpart {

/// The real path of \p Path (symlinks resolved, `.` and `..` gone). For a
/// file that does not exist yet (an output), the real path of its folder
/// joined with its name; if that folder does not exist either, the
/// absolute path with dots removed.
std::string canonicalPath(llvm::StringRef Path);

} // namespace smpart
