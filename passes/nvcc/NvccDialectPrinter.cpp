#include "nvcc/NvccDialectPrinter.h"

#include "clang/Basic/DiagnosticAST.h"
#include "clang/Basic/DiagnosticSema.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/Support/raw_ostream.h"

using namespace clang;

namespace smpart {

void NvccDialectPrinter::HandleDiagnostic(DiagnosticsEngine::Level Level,
                                          const Diagnostic &Info) {
  if (Level == DiagnosticsEngine::Error)
    if (const char *Feature = nvccFeature(Info)) {
      ++Tolerated;
      TextDiagnosticPrinter::HandleDiagnostic(DiagnosticsEngine::Warning, Info);
      llvm::errs() << "smpart-transform: note: nvcc accepts this (" << Feature
                   << "); parsing goes on\n";
      return;
    }
  TextDiagnosticPrinter::HandleDiagnostic(Level, Info);
}

const char *NvccDialectPrinter::nvccFeature(const Diagnostic &Info) {
  switch (Info.getID()) {
  case diag::err_shared_var_init:
    // `__shared__ cuda::barrier<...> b;`: nvcc runs no constructor for
    // __shared__ variables and accepts non-empty ones; clang refuses.
    return "a __shared__ variable of a type with a non-trivial "
           "constructor, which nvcc leaves uninitialised";
  case diag::err_asm_invalid_escape: {
    // `asm("mov.u64 %0, %globaltimer;" ...)`: nvcc passes a single-%
    // PTX special register through. Not for %ctaid/%nctaid: the asm is
    // dropped from clang's AST, and those must be seen to be refused.
    if (!Info.hasSourceManager() || Info.getLocation().isInvalid())
      return nullptr;
    const SourceManager &SM = Info.getSourceManager();
    std::pair<FileID, unsigned> At =
        SM.getDecomposedLoc(SM.getSpellingLoc(Info.getLocation()));
    llvm::StringRef Text = SM.getBufferData(At.first);
    size_t Begin = Text.rfind('\n', At.second);
    llvm::StringRef Line =
        Text.substr(Begin == llvm::StringRef::npos ? 0 : Begin + 1)
            .take_until([](char C) { return C == '\n'; });
    if (Line.contains("ctaid"))
      return nullptr;
    return "a PTX special register spelled with a single % in inline asm";
  }
  default:
    return nullptr;
  }
}

} // namespace smpart
