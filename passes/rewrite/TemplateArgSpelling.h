// Template arguments spelled as source text that names the same
// specialization elsewhere: the kernel address at a launch site, and the
// preload registration at the end of the file. The AST's own printing is
// for diagnostics (`(lambda at f.cu:3:5)`, `(anonymous namespace)::T`),
// not for code.
#pragma once

#include "clang/AST/ASTContext.h"
#include "clang/AST/TemplateBase.h"

#include <optional>
#include <string>

namespace smpart {

/// Where the spelling will be compiled.
enum class SpellingScope {
  Launch, ///< inside the function that launches: its local types are named
  Global, ///< at namespace scope, after everything in the file
};

/// `<A, B, ...>` (packs expanded in place), or nullopt when one argument
/// cannot be spelled at `Where`: a type that is or involves a lambda's
/// closure, an unnamed class or enum, and at global scope also a
/// function-local or non-public member type (looking through pointers,
/// references, arrays, function and member pointer types and class
/// template arguments); a non-type argument other than an integer or an
/// enumerator.
std::optional<std::string>
spellTemplateArgs(llvm::ArrayRef<clang::TemplateArgument> Args,
                  const clang::ASTContext &AST, SpellingScope Where);

} // namespace smpart
