// Where clang's view of a file differs from nvcc's in a way the tool cannot
// undo, it says so, once, naming the dialect feature: clang's CUDA wrapper
// includes "cuda.h", which defines CUDA_VERSION; nvcc does not. A file that
// tests CUDA_VERSION without including cuda.h itself is parsed on the
// branch nvcc does not compile.
#pragma once

#include "clang/Lex/PPCallbacks.h"

#include <functional>
#include <set>
#include <string>

namespace smpart {

class DialectNotes : public clang::PPCallbacks {
public:
  DialectNotes(const clang::SourceManager &SM,
               std::function<bool(clang::SourceLocation)> Rewritable,
               std::string CudaPath, std::set<std::string> &Notes)
      : SM(SM), Rewritable(std::move(Rewritable)),
        CudaPath(std::move(CudaPath)), Notes(Notes) {}

  void
  InclusionDirective(clang::SourceLocation HashLoc,
                     const clang::Token &IncludeTok, llvm::StringRef FileName,
                     bool IsAngled, clang::CharSourceRange FilenameRange,
                     clang::OptionalFileEntryRef File,
                     llvm::StringRef SearchPath, llvm::StringRef RelativePath,
                     const clang::Module *SuggestedModule, bool ModuleImported,
                     clang::SrcMgr::CharacteristicKind FileType) override;
  void Ifdef(clang::SourceLocation Loc, const clang::Token &MacroNameTok,
             const clang::MacroDefinition &MD) override;
  void Ifndef(clang::SourceLocation Loc, const clang::Token &MacroNameTok,
              const clang::MacroDefinition &MD) override;
  void Defined(const clang::Token &MacroNameTok,
               const clang::MacroDefinition &MD,
               clang::SourceRange Range) override;
  void MacroExpands(const clang::Token &MacroNameTok,
                    const clang::MacroDefinition &MD, clang::SourceRange Range,
                    const clang::MacroArgs *Args) override;

private:
  void cudaVersionUse(clang::SourceLocation Loc,
                      const clang::Token &MacroNameTok);

  const clang::SourceManager &SM;
  std::function<bool(clang::SourceLocation)> Rewritable;
  std::string CudaPath;
  std::set<std::string> &Notes;
  bool UserIncludedCudaH = false;
};

} // namespace smpart
