#include "rewrite/LaunchSyntax.h"

#include "clang/AST/ExprCXX.h"
#include "clang/Lex/Lexer.h"

using namespace clang;

namespace smpart {

std::optional<LaunchSyntax> parseLaunch(const CUDAKernelCallExpr &Call,
                                        const SourceManager &SM,
                                        const LangOptions &LO) {
  const CallExpr *Config = Call.getConfig();
  if (!Config || !Config->getCallee())
    return std::nullopt;
  LaunchSyntax S;
  SourceLocation Begin = Call.getCallee()->getBeginLoc();
  SourceLocation Open = Config->getCallee()->getBeginLoc();
  if (Open.isMacroID() && SM.isMacroBodyExpansion(Open)) {
    S.MacroName = Lexer::getImmediateMacroName(Open, SM, LO).str();
    // `k<<<...>>>` in a macro body with `k` a macro parameter: edit the
    // parameter's use in the body, not the argument of one expansion.
    while (Begin.isMacroID() && SM.isMacroArgExpansion(Begin))
      Begin = SM.getImmediateExpansionRange(Begin).getBegin();
  } else if (!Open.isMacroID() && Begin.isMacroID()) {
    // `NAME<<<...>>>(...)` with `#define NAME k` (or `k<float>`): the
    // launch is written here, its callee is the macro's name. Its spelling
    // is the macro's body, which an edit would change for every use.
    Begin = SM.getExpansionLoc(Begin);
  }
  S.CalleeBegin = SM.getSpellingLoc(Begin);
  // Sema builds the configuration call with its callee at `<<<` and its
  // right parenthesis at `>>>`.
  S.ConfigOpen = SM.getSpellingLoc(Open);
  S.ConfigClose = SM.getSpellingLoc(Config->getRParenLoc());
  S.ArgsClose = SM.getSpellingLoc(Call.getRParenLoc());
  FileID File = SM.getFileID(S.CalleeBegin);
  for (SourceLocation L : {S.ConfigOpen, S.ConfigClose, S.ArgsClose})
    if (L.isInvalid() || SM.getFileID(L) != File)
      return std::nullopt;
  unsigned OpenOffset = SM.getFileOffset(S.ConfigOpen);
  unsigned Close = SM.getFileOffset(S.ConfigClose);
  unsigned Callee = SM.getFileOffset(S.CalleeBegin);
  unsigned End = SM.getFileOffset(S.ArgsClose);
  if (!(Callee < OpenOffset && OpenOffset < Close && Close < End))
    return std::nullopt;

  // The `(` is the first token after `>>>`.
  std::optional<Token> Paren = Lexer::findNextToken(S.ConfigClose, SM, LO);
  if (!Paren || Paren->isNot(tok::l_paren) ||
      SM.getFileID(Paren->getLocation()) != File)
    return std::nullopt;
  S.ArgsOpen = Paren->getLocation();

  for (const Expr *Arg : Config->arguments())
    if (!isa<CXXDefaultArgExpr>(Arg))
      ++S.WrittenConfigArgs;
  bool Invalid = false;
  llvm::StringRef Buffer = SM.getBufferData(File, &Invalid);
  if (Invalid)
    return std::nullopt;
  S.CalleeText = Buffer.substr(Callee, OpenOffset - Callee).trim().str();
  return S;
}

} // namespace smpart
