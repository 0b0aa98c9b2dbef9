// Prints the parse's diagnostics like the compiler, except the errors for
// code that nvcc accepts and clang-22 does not, where the AST that clang
// built is still good enough to rewrite: those print as warnings with a
// note naming the nvcc dialect feature, and do not fail the file.
#pragma once

#include "clang/Frontend/TextDiagnosticPrinter.h"

namespace smpart {

class NvccDialectPrinter : public clang::TextDiagnosticPrinter {
public:
  using clang::TextDiagnosticPrinter::TextDiagnosticPrinter;
  /// Errors printed as warnings: the tool's status is non-zero after one,
  /// and this count says that it may be ignored.
  unsigned Tolerated = 0;

  void HandleDiagnostic(clang::DiagnosticsEngine::Level Level,
                        const clang::Diagnostic &Info) override;

private:
  /// The nvcc feature that \p Info is about, or null when nvcc too would
  /// refuse the code.
  static const char *nvccFeature(const clang::Diagnostic &Info);
};

} // namespace smpart
