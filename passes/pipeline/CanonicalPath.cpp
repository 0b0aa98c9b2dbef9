#include "pipeline/CanonicalPath.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

namespace smpart {

std::string canonicalPath(llvm::StringRef Path) {
  llvm::SmallString<256> Absolute(Path);
  if (Absolute.empty() || Absolute == "-")
    return std::string(Absolute);
  llvm::sys::fs::make_absolute(Absolute);
  // Every edit asks for the name of its file: resolve an existing file once
  // (outputs that do not exist yet are not remembered, they may appear).
  static llvm::StringMap<std::string> Known;
  if (auto It = Known.find(Absolute); It != Known.end())
    return It->second;
  llvm::SmallString<256> Real;
  if (!llvm::sys::fs::real_path(Absolute, Real))
    return Known[Absolute] = std::string(Real);
  // `..` after a symlinked folder leaves that folder's target, not the
  // link's parent, so dots are removed by hand only where nothing resolves.
  llvm::StringRef Parent = llvm::sys::path::parent_path(Absolute);
  if (!Parent.empty() && !llvm::sys::fs::real_path(Parent, Real)) {
    llvm::sys::path::append(Real, llvm::sys::path::filename(Absolute));
    return std::string(Real);
  }
  llvm::sys::path::remove_dots(Absolute, /*remove_dot_dot=*/true);
  return std::string(Absolute);
}

} // namespace smpart
