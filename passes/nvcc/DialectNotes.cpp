#include "nvcc/DialectNotes.h"

#include "clang/Basic/SourceManager.h"
#include "clang/Lex/MacroInfo.h"
#include "clang/Lex/Token.h"
#include "llvm/Support/Path.h"

using namespace clang;

namespace smpart {

static std::string where(const SourceManager &SM, SourceLocation Loc) {
  const PresumedLoc P = SM.getPresumedLoc(SM.getExpansionLoc(Loc));
  return P.isValid() ? std::string(P.getFilename()) + ":" +
                           std::to_string(P.getLine()) + ":" +
                           std::to_string(P.getColumn())
                     : std::string("<unknown>");
}

void DialectNotes::InclusionDirective(SourceLocation HashLoc, const Token &,
                                      llvm::StringRef FileName, bool,
                                      CharSourceRange, OptionalFileEntryRef,
                                      llvm::StringRef, llvm::StringRef,
                                      const Module *, bool,
                                      SrcMgr::CharacteristicKind) {
  if (llvm::sys::path::filename(FileName) != "cuda.h")
    return;
  if (Rewritable(HashLoc))
    UserIncludedCudaH = true;
}

void DialectNotes::cudaVersionUse(SourceLocation Loc, const Token &Name) {
  if (UserIncludedCudaH || !Name.getIdentifierInfo() ||
      Name.getIdentifierInfo()->getName() != "CUDA_VERSION" || !Rewritable(Loc))
    return;
  Notes.insert(where(SM, Loc) +
               ": warning: smpart: nvcc dialect: CUDA_VERSION is tested "
               "here without including cuda.h; clang's CUDA wrapper defines "
               "it, nvcc does not, so the tool parsed the branch nvcc does "
               "not compile (include <cuda.h>, or test CUDART_VERSION)");
}

void DialectNotes::Ifdef(SourceLocation Loc, const Token &MacroNameTok,
                         const MacroDefinition &) {
  cudaVersionUse(Loc, MacroNameTok);
}
void DialectNotes::Ifndef(SourceLocation Loc, const Token &MacroNameTok,
                          const MacroDefinition &) {
  cudaVersionUse(Loc, MacroNameTok);
}
void DialectNotes::Defined(const Token &MacroNameTok, const MacroDefinition &,
                           SourceRange Range) {
  cudaVersionUse(Range.getBegin(), MacroNameTok);
}
void DialectNotes::MacroExpands(const Token &MacroNameTok,
                                const MacroDefinition &, SourceRange Range,
                                const MacroArgs *) {
  cudaVersionUse(Range.getBegin(), MacroNameTok);
}

} // namespace smpart
