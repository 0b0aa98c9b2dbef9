// Shared by every rewrite class during one parse: where facts go, which
// files may be rewritten, and helpers that turn AST locations into Places,
// Edits and function keys.
#pragma once

#include "pipeline/Facts.h"

#include "clang/AST/Decl.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/Support/Regex.h"

#include <optional>

namespace smpart {

class RewriteContext {
public:
  RewriteContext(FileFacts &Facts, const llvm::Regex *HeaderFilter,
                 KeepOriginal Keep = KeepOriginal::All)
      : Facts(Facts), HeaderFilter(HeaderFilter), Keep(Keep) {}

  FileFacts &facts() { return Facts; }
  KeepOriginal keepOriginal() const { return Keep; }

  /// The facts of FD's pattern, with its name and place filled in.
  FunctionFacts &functionFacts(const clang::SourceManager &SM,
                               const clang::FunctionDecl *FD);

  /// The main file, and headers matched by --header-filter.
  bool isRewritable(const clang::SourceManager &SM,
                    clang::SourceLocation Loc) const;

  /// The canonical name (pipeline/CanonicalPath.h) of the file Loc is
  /// spelled in.
  static std::string fileOf(const clang::SourceManager &SM,
                            clang::SourceLocation Loc);
  /// The file name a #line directive before Loc names: what a #line in the
  /// input says, or else fileOf (the name the output's header uses).
  static std::string lineFileOf(const clang::SourceManager &SM,
                                clang::SourceLocation Loc);
  /// The key of a function: the place of its defining declaration (of the
  /// template pattern, for instantiations), stable across both parses.
  static std::string keyOf(const clang::SourceManager &SM,
                           const clang::FunctionDecl *FD);
  /// The declaration that owns the body the rewrite edits.
  static const clang::FunctionDecl *patternOf(const clang::FunctionDecl *FD);

  /// A kernel smpart-transform already rewrote (its first parameter is the
  /// smpart::LaunchControl), e.g. in a header rewritten by an earlier run, or
  /// the original definition that run kept beside it: left alone, as are
  /// launches of either (a launch of the kept original runs the original).
  static bool isGeneratedKernel(const clang::FunctionDecl &FD);

  /// --keep-original asks for the original of this kernel (an extern "C"
  /// kernel cannot have one: its name does not overload).
  static bool wantsOriginal(const clang::FunctionDecl &Definition,
                            KeepOriginal Keep);

  /// `static_cast<void (*)(smpart::LaunchControl, P...)>(&Name)`: the
  /// rewritten overload of kernel FD (P: its parameter types), which names
  /// one function also where the original is kept beside it.
  static std::string rewrittenOverload(const clang::FunctionDecl &FD,
                                       llvm::StringRef Name,
                                       const clang::ASTContext &AST);

  static Place placeOf(const clang::SourceManager &SM,
                       clang::SourceLocation Loc);

  /// An edit of the spelled text of [Begin, End) (End exclusive, a file
  /// location after spelling resolution). Fails inside macros unless
  /// `AllowMacro` is set, in which case the spelling is edited.
  static std::optional<Edit> replace(const clang::SourceManager &SM,
                                     clang::SourceLocation Begin,
                                     clang::SourceLocation End,
                                     llvm::StringRef Text,
                                     bool AllowMacro = false);
  static std::optional<Edit> insert(const clang::SourceManager &SM,
                                    clang::SourceLocation At,
                                    llvm::StringRef Text,
                                    bool AllowMacro = false);

private:
  FileFacts &Facts;
  const llvm::Regex *HeaderFilter;
  KeepOriginal Keep;
};

} // namespace smpart
