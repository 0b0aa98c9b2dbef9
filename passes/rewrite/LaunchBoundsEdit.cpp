#include "rewrite/LaunchBoundsEdit.h"

#include "pipeline/RewriteContext.h"

#include "clang/AST/Attr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/Lex/Lexer.h"

#include <string>

using namespace clang;

namespace smpart {

/// The largest block CUDA launches, on every architecture smpart targets.
static constexpr unsigned kMaxBlockThreads = 1024;

namespace {
/// The attribute's (T, M) arguments as written, and where both are.
struct WrittenBounds {
  std::string Threads;
  std::string MinBlocks;
  CharSourceRange Args;
};
} // namespace

/// The text between the parentheses of the `__launch_bounds__(...)` that
/// \p LB expands from, where that is written in the file: arguments that
/// expand macros of their own (`__launch_bounds__(1024, BLOCKS_PER_SM)`)
/// have no file range of their own.
static CharSourceRange invocationArgs(const CUDALaunchBoundsAttr &LB,
                                      const SourceManager &SM,
                                      const LangOptions &LO) {
  if (!LB.getLocation().isMacroID())
    return {};
  const CharSourceRange Invocation = SM.getExpansionRange(LB.getLocation());
  const StringRef Text = Lexer::getSourceText(Invocation, SM, LO);
  const std::size_t Open = Text.find('(');
  if (!Text.starts_with("__launch_bounds__") || Open == StringRef::npos ||
      !Text.ends_with(")"))
    return {};
  const SourceLocation Begin = Invocation.getBegin();
  return CharSourceRange::getCharRange(Begin.getLocWithOffset(Open + 1),
                                       Begin.getLocWithOffset(Text.size() - 1));
}

/// \p LB's arguments when it has exactly two, written in the file (not in
/// a macro's body). A third argument (a cluster's maximum blocks) is
/// dropped from the AST where the parse's architecture predates clusters:
/// the text says whether there is one.
static std::optional<WrittenBounds> written(const CUDALaunchBoundsAttr &LB,
                                            const SourceManager &SM,
                                            const LangOptions &LO) {
  if (!LB.getMinBlocks() || LB.getMaxBlocks())
    return std::nullopt;
  auto Range = [&](const Expr *First, const Expr *Last) {
    return Lexer::makeFileCharRange(
        CharSourceRange::getTokenRange(First->getBeginLoc(), Last->getEndLoc()),
        SM, LO);
  };
  const Expr *T = LB.getMaxThreads(), *M = LB.getMinBlocks();
  const CharSourceRange Args = Range(T, M), TR = Range(T, T), MR = Range(M, M);
  if (Args.isValid() && TR.isValid() && MR.isValid()) {
    const std::pair<FileID, unsigned> End = SM.getDecomposedLoc(Args.getEnd());
    if (SM.getBufferData(End.first).substr(End.second).ltrim().starts_with(","))
      return std::nullopt;
    return WrittenBounds{Lexer::getSourceText(TR, SM, LO).str(),
                         Lexer::getSourceText(MR, SM, LO).str(), Args};
  }
  // Split at the one comma outside brackets; a comma that may be a
  // template argument list's gives up.
  const CharSourceRange Inside = invocationArgs(LB, SM, LO);
  if (Inside.isInvalid())
    return std::nullopt;
  const StringRef Text = Lexer::getSourceText(Inside, SM, LO);
  if (Text.contains('<'))
    return std::nullopt;
  std::optional<std::size_t> Comma;
  int Depth = 0;
  for (std::size_t I = 0; I < Text.size(); ++I) {
    if (Text[I] == '(' || Text[I] == '[' || Text[I] == '{')
      ++Depth;
    else if (Text[I] == ')' || Text[I] == ']' || Text[I] == '}')
      --Depth;
    else if (Text[I] == ',' && Depth == 0) {
      if (Comma)
        return std::nullopt; // a third argument
      Comma = I;
    }
  }
  if (!Comma)
    return std::nullopt;
  return WrittenBounds{Text.take_front(*Comma).trim().str(),
                       Text.drop_front(*Comma + 1).trim().str(), Inside};
}

/// The value of a decimal literal below 65536, as written.
static std::optional<unsigned> literal(StringRef Text) {
  unsigned V = 0;
  if (Text.trim().getAsInteger(10, V) || V > 0xffff)
    return std::nullopt;
  return V;
}

/// The new arguments for \p B; empty for none.
static std::string widenedArgs(const WrittenBounds &B) {
  const std::optional<unsigned> T = literal(B.Threads),
                                M = literal(B.MinBlocks);
  if (T && M) {
    const unsigned Threads = (*T + 31) / 32 * 32 * *M;
    return *M == 0 || Threads > kMaxBlockThreads ? std::string()
                                                 : std::to_string(Threads);
  }
  // Anything else may depend on a template parameter, or on the
  // architecture (a macro of __CUDA_ARCH__): nvcc decides for each. A
  // minimum of 0 blocks is no .minnctapersm at all (1 would still be a
  // budget to fill).
  const std::string &TS = B.Threads, &MS = B.MinBlocks;
  if (TS.empty() || MS.empty())
    return std::string();
  const std::string Threads = "((" + TS + ") + 31) / 32 * 32 * (" + MS + ")";
  const std::string Wider = "((" + MS + ") >= 1 && " + Threads +
                            " <= " + std::to_string(kMaxBlockThreads) + ")";
  return Wider + " ? " + Threads + " : (" + TS + "), " + Wider + " ? 0 : (" +
         MS + ")";
}

std::set<Edit> launchBoundsEdits(const FunctionDecl &Kernel,
                                 const ASTContext &AST) {
  const SourceManager &SM = AST.getSourceManager();
  const LangOptions &LO = AST.getLangOpts();
  const FileID File = SM.getFileID(SM.getExpansionLoc(Kernel.getLocation()));
  std::set<Edit> Edits;
  for (const FunctionDecl *D : Kernel.redecls()) {
    if (SM.getFileID(SM.getExpansionLoc(D->getLocation())) != File)
      continue; // another file's declaration names the original
    const auto *LB = D->getAttr<CUDALaunchBoundsAttr>();
    if (!LB || LB->isInherited())
      continue; // written on another declaration
    std::optional<WrittenBounds> B = written(*LB, SM, LO);
    if (!B)
      return {};
    const std::string Args = widenedArgs(*B);
    if (Args.empty())
      return {};
    std::optional<Edit> E = RewriteContext::replace(
        SM, B->Args.getBegin(), B->Args.getEnd(), Args, /*AllowMacro=*/true);
    if (!E)
      return {};
    Edits.insert(*E);
  }
  return Edits;
}

std::optional<unsigned> originalMaxThreads(const FunctionDecl &Kernel,
                                           const ASTContext &AST) {
  // The most recent declaration has every declaration's attributes.
  const FunctionDecl &Last = *Kernel.getMostRecentDecl();
  const auto *LB = Last.getAttr<CUDALaunchBoundsAttr>();
  const SourceManager &SM = AST.getSourceManager();
  const std::optional<WrittenBounds> B =
      LB ? written(*LB, SM, AST.getLangOpts()) : std::nullopt;
  if (!B)
    return std::nullopt;
  // An instance's template argument, or a literal as written: a number
  // from a macro may differ between the parses (a macro of __CUDA_ARCH__),
  // and each would write its own launch.
  const Expr *T = LB->getMaxThreads()->IgnoreParens();
  if (const auto *Subst = dyn_cast<SubstNonTypeTemplateParmExpr>(T))
    if (const auto *L =
            dyn_cast<IntegerLiteral>(Subst->getReplacement()->IgnoreParens()))
      if (L->getValue().getActiveBits() <= 16)
        return static_cast<unsigned>(L->getValue().getZExtValue());
  return literal(B->Threads);
}

} // namespace smpart
