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
/// The attribute's (T, M) arguments and their text in the file.
struct WrittenBounds {
  const Expr *Threads;
  const Expr *MinBlocks;
  CharSourceRange Args;
};
} // namespace

/// \p LB's arguments when it has exactly two, written in the file (not in
/// a macro's body). A third argument (a cluster's maximum blocks) is
/// dropped from the AST where the parse's architecture predates clusters:
/// the text says whether there is one.
static std::optional<WrittenBounds> written(const CUDALaunchBoundsAttr &LB,
                                            const SourceManager &SM,
                                            const LangOptions &LO) {
  if (!LB.getMinBlocks() || LB.getMaxBlocks())
    return std::nullopt;
  const CharSourceRange Args = Lexer::makeFileCharRange(
      CharSourceRange::getTokenRange(LB.getMaxThreads()->getBeginLoc(),
                                     LB.getMinBlocks()->getEndLoc()),
      SM, LO);
  if (Args.isInvalid())
    return std::nullopt;
  const std::pair<FileID, unsigned> End = SM.getDecomposedLoc(Args.getEnd());
  if (SM.getBufferData(End.first).substr(End.second).ltrim().starts_with(","))
    return std::nullopt;
  return WrittenBounds{LB.getMaxThreads(), LB.getMinBlocks(), Args};
}

/// The value of an integer literal (in parentheses or not) below 65536.
static std::optional<unsigned> literal(const Expr *E) {
  const auto *L = dyn_cast<IntegerLiteral>(E->IgnoreParens());
  if (!L || L->getValue().getActiveBits() > 16)
    return std::nullopt;
  return static_cast<unsigned>(L->getValue().getZExtValue());
}

static std::string text(const Expr *E, const SourceManager &SM,
                        const LangOptions &LO) {
  const CharSourceRange R = Lexer::makeFileCharRange(
      CharSourceRange::getTokenRange(E->getSourceRange()), SM, LO);
  return R.isValid() ? Lexer::getSourceText(R, SM, LO).str() : std::string();
}

/// The new arguments for \p B; empty for none.
static std::string widenedArgs(const WrittenBounds &B, const SourceManager &SM,
                               const LangOptions &LO) {
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
  const std::string TS = text(B.Threads, SM, LO),
                    MS = text(B.MinBlocks, SM, LO);
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
    const std::string Args = widenedArgs(*B, SM, LO);
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
  if (!LB || !written(*LB, AST.getSourceManager(), AST.getLangOpts()))
    return std::nullopt;
  const Expr *T = LB->getMaxThreads()->IgnoreParens();
  if (const auto *Subst = dyn_cast<SubstNonTypeTemplateParmExpr>(T))
    T = Subst->getReplacement()->IgnoreParens(); // an instance's argument
  return literal(T);
}

} // namespace smpart
