#include "rewrite/KernelNameEdit.h"

#include "clang/Lex/Lexer.h"

using namespace clang;

namespace smpart {

std::optional<Edit>
wrapKernelName(const Expr &Operand, const SourceManager &SM,
               const LangOptions &LO, const RewriteContext &Ctx,
               llvm::function_ref<std::string(llvm::StringRef)> Wrap) {
  const CharSourceRange Range = Lexer::makeFileCharRange(
      CharSourceRange::getTokenRange(Operand.getSourceRange()), SM, LO);
  // Not one stretch of the file: spelled in a macro's body, edited there
  // only if all of it is (`&` in the body and the name an argument is
  // two places).
  if (Range.isInvalid() &&
      (!SM.isMacroBodyExpansion(Operand.getBeginLoc()) ||
       !SM.isMacroBodyExpansion(Operand.getEndLoc()) ||
       SM.getFileID(SM.getSpellingLoc(Operand.getBeginLoc())) !=
           SM.getFileID(SM.getSpellingLoc(Operand.getEndLoc())) ||
       SM.getExpansionLoc(Operand.getBeginLoc()) !=
           SM.getExpansionLoc(Operand.getEndLoc())))
    return std::nullopt;
  const SourceLocation Begin =
      Range.isValid() ? Range.getBegin() : Operand.getBeginLoc();
  const SourceLocation End =
      Range.isValid() ? Range.getEnd()
                      : Lexer::getLocForEndOfToken(
                            SM.getSpellingLoc(Operand.getEndLoc()), 0, SM, LO);
  const SourceLocation Spelled = SM.getSpellingLoc(Begin);
  std::optional<Edit> E =
      RewriteContext::replace(SM, Begin, End, "", /*AllowMacro=*/true);
  if (!E || E->Length == 0 || SM.isWrittenInScratchSpace(Spelled) ||
      !Ctx.isRewritable(SM, Spelled))
    return std::nullopt;
  E->Text = Wrap(
      SM.getBufferData(SM.getFileID(Spelled)).substr(E->Offset, E->Length));
  return E;
}

} // namespace smpart
