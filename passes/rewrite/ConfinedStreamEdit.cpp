#include "rewrite/ConfinedStreamEdit.h"

#include "pipeline/RewriteContext.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/Lex/Lexer.h"
#include "llvm/Support/raw_ostream.h"

using namespace clang;

namespace smpart {

std::string partitionName(const FunctionDecl &Kernel) {
  if (Kernel.isExternC())
    return Kernel.getNameAsString();
  PrintingPolicy Policy(Kernel.getASTContext().getLangOpts());
  Policy.SuppressInlineNamespace =
      llvm::to_underlying(PrintingPolicy::SuppressInlineNamespaceMode::None);
  std::string Name;
  llvm::raw_string_ostream OS(Name);
  Kernel.printQualifiedName(OS, Policy);
  return Name;
}

std::optional<std::set<Edit>>
confinedStreamEdits(const CUDAKernelCallExpr &Call, const LaunchSyntax &S,
                    llvm::StringRef Partition, const SourceManager &SM,
                    const LangOptions &LO) {
  const std::string Open = "smpart::confined(" + Partition.str() + ", ";
  std::optional<Edit> E;
  if (S.WrittenConfigArgs == 4) {
    const CharSourceRange Stream = Lexer::makeFileCharRange(
        CharSourceRange::getTokenRange(
            Call.getConfig()->getArg(3)->getSourceRange()),
        SM, LO);
    const llvm::StringRef Text = Lexer::getSourceText(Stream, SM, LO);
    if (Text.starts_with("smpart::confined("))
      return std::set<Edit>{};
    if (Stream.isValid() && !Text.empty())
      E = RewriteContext::replace(SM, Stream.getBegin(), Stream.getEnd(),
                                  Open + Text.str() + ")");
  } else {
    E = RewriteContext::insert(
        SM, S.ConfigClose,
        std::string(S.WrittenConfigArgs == 2 ? ", 0" : "") + ", " + Open +
            "0)");
  }
  if (!E)
    return std::nullopt;
  return std::set<Edit>{*E};
}

} // namespace smpart
