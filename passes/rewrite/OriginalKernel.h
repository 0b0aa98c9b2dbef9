// Copies of a kernel's original declarations and definition, kept beside
// the rewritten overload: other translation units that declare the kernel
// themselves (a shared header, or by hand) still link and launch it, and a
// rewritten launch can run it unchanged (SMPART_DISABLE=1). Each copy is
// bracketed by #line directives, so no line of the user's code moves.
#pragma once

#include "pipeline/Facts.h"

#include "clang/AST/Decl.h"
#include "clang/AST/Stmt.h"
#include "clang/Basic/SourceManager.h"

#include <optional>

namespace smpart {

/// The original definition, verbatim, inserted before the definition.
/// Nullopt when its text cannot be copied (spelled across files or macros).
std::optional<Edit> copyOfDefinition(const clang::FunctionDecl &Kernel,
                                     const clang::CompoundStmt &Body,
                                     const clang::SourceManager &SM);

/// A declaration (not the definition), verbatim, inserted before itself:
/// code between it and the definition still sees the original signature.
std::optional<Edit> copyOfDeclaration(const clang::FunctionDecl &D,
                                      const clang::SourceManager &SM,
                                      const clang::LangOptions &LO);

} // namespace smpart
