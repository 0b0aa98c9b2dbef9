#include "rewrite/LaunchBoundsEdit.h"

#include "pipeline/RewriteContext.h"

#include "clang/AST/Attr.h"
#include "clang/Lex/Lexer.h"

#include <string>

using namespace clang;

namespace smpart {

/// The largest block CUDA launches, on every architecture smpart targets.
static constexpr unsigned kMaxBlockThreads = 1024;

namespace {
struct Bounds {
  unsigned Threads;
  unsigned MinBlocks;
};
} // namespace

/// The attribute's T and M as numbers, when both are written and neither
/// depends on a template parameter.
static std::optional<Bounds> evaluate(const CUDALaunchBoundsAttr &LB,
                                      const ASTContext &AST) {
  if (!LB.getMinBlocks() || LB.getMaxBlocks() ||
      LB.getMaxThreads()->isValueDependent() ||
      LB.getMinBlocks()->isValueDependent())
    return std::nullopt;
  std::optional<llvm::APSInt> T =
      LB.getMaxThreads()->getIntegerConstantExpr(AST);
  std::optional<llvm::APSInt> M =
      LB.getMinBlocks()->getIntegerConstantExpr(AST);
  if (!T || !M || T->isNegative() || M->isNegative() ||
      T->getActiveBits() > 16 || M->getActiveBits() > 16)
    return std::nullopt;
  return Bounds{static_cast<unsigned>(T->getZExtValue()),
                static_cast<unsigned>(M->getZExtValue())};
}

/// M x T rounded up to a warp: the threads of one block that cap registers
/// as M blocks of T threads do; 0 when that is no block CUDA launches.
static unsigned widened(Bounds B) {
  const unsigned Threads = (B.Threads + 31) / 32 * 32 * B.MinBlocks;
  return B.MinBlocks == 0 || Threads > kMaxBlockThreads ? 0 : Threads;
}

std::optional<Edit> launchBoundsEdit(const FunctionDecl &D,
                                     const ASTContext &AST) {
  const auto *LB = D.getAttr<CUDALaunchBoundsAttr>();
  // Inherited: written on another declaration, which gets its own edit.
  if (!LB || LB->isInherited() || !LB->getMinBlocks() || LB->getMaxBlocks())
    return std::nullopt;
  const SourceManager &SM = AST.getSourceManager();
  const LangOptions &LO = AST.getLangOpts();
  auto Range = [&](const Expr *First, const Expr *Last) {
    return Lexer::makeFileCharRange(
        CharSourceRange::getTokenRange(First->getBeginLoc(), Last->getEndLoc()),
        SM, LO);
  };
  const Expr *T = LB->getMaxThreads(), *M = LB->getMinBlocks();
  const CharSourceRange Args = Range(T, M);
  if (Args.isInvalid())
    return std::nullopt;
  // A third argument (a cluster's maximum blocks) is dropped from the AST
  // when the parse's architecture predates clusters: look at the text.
  const std::pair<FileID, unsigned> End = SM.getDecomposedLoc(Args.getEnd());
  if (SM.getBufferData(End.first).substr(End.second).ltrim().starts_with(","))
    return std::nullopt;
  std::string Text;
  if (std::optional<Bounds> B = evaluate(*LB, AST)) {
    const unsigned Threads = widened(*B);
    if (Threads == 0)
      return std::nullopt;
    Text = std::to_string(Threads);
  } else {
    const CharSourceRange TR = Range(T, T), MR = Range(M, M);
    if (TR.isInvalid() || MR.isInvalid())
      return std::nullopt;
    const std::string TS = "(" + Lexer::getSourceText(TR, SM, LO).str() + ")",
                      MS = "(" + Lexer::getSourceText(MR, SM, LO).str() + ")";
    // A minimum of 0 blocks is no .minnctapersm at all (1 would still be
    // a budget to fill).
    const std::string Threads = "(" + TS + " + 31) / 32 * 32 * " + MS;
    const std::string Wider = "(" + MS + " >= 1 && " + Threads +
                              " <= " + std::to_string(kMaxBlockThreads) + ")";
    Text = Wider + " ? " + Threads + " : " + TS + ", " + Wider + " ? 0 : " + MS;
  }
  return RewriteContext::replace(SM, Args.getBegin(), Args.getEnd(), Text,
                                 /*AllowMacro=*/true);
}

std::optional<unsigned> widenedMaxThreads(const FunctionDecl &Kernel,
                                          const ASTContext &AST) {
  const auto *LB = Kernel.getAttr<CUDALaunchBoundsAttr>();
  if (!LB)
    return std::nullopt;
  std::optional<Bounds> B = evaluate(*LB, AST);
  if (!B || widened(*B) <= B->Threads)
    return std::nullopt;
  return B->Threads;
}

} // namespace smpart
