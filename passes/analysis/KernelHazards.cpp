#include "analysis/KernelHazards.h"

#include "analysis/AgreedParents.h"
#include "analysis/DeviceCode.h"

#include "clang/AST/DeclCXX.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/Stmt.h"
#include "llvm/ADT/StringExtras.h"

#include <optional>

using namespace clang;
using namespace clang::ast_matchers;

namespace smpart {

std::string KernelHazards::gridDependentCall(const CallExpr &Call) {
  const FunctionDecl *Callee = Call.getDirectCallee();
  if (!Callee || !Callee->getIdentifier())
    return {};
  llvm::StringRef Name = Callee->getName();
  if (const auto *Method = dyn_cast<CXXMethodDecl>(Callee)) {
    llvm::StringRef Class = Method->getParent()->getName();
    if (Class == "grid_group" || Class == "multi_grid_group")
      return Name == "sync"
                 ? "grid-wide synchronisation (" + Class.str() + "::sync)"
                 : Class.str() + "::" + Name.str() +
                       " queries the physical grid";
    if (Class == "cluster_group")
      return "cooperative_groups::cluster_group::" + Name.str() +
             " works on a thread-block cluster";
    if (Class == "thread_block" &&
        (Name == "group_index" || Name == "block_index"))
      return "thread_block::" + Name.str() + " reads the physical block index";
    return {};
  }
  if (inCooperativeGroups(*Callee) && Name == "this_cluster")
    return "cooperative_groups::this_cluster() spans a thread-block cluster";
  if (inCooperativeGroups(*Callee) &&
      (Name == "this_grid" || Name == "this_multi_grid"))
    return "cooperative_groups::" + Name.str() +
           "() spans the physical grid (grid-wide sync or block ranks)";
  if (Name == "cudaLaunchDevice" || Name == "cudaLaunchDeviceV2")
    return "device-side kernel launch (dynamic parallelism)";
  return {};
}

/// Why a kernel making \p Call must run on every SM even when refused, or
/// empty: its CTAs must all be resident at once (grid-wide sync), form
/// clusters, or launch from the device.
static std::string runsFreeFor(const CallExpr &Call) {
  const FunctionDecl *Callee = Call.getDirectCallee();
  if (!Callee || !Callee->getIdentifier())
    return {};
  const llvm::StringRef Name = Callee->getName();
  llvm::StringRef Class;
  if (const auto *Method = dyn_cast<CXXMethodDecl>(Callee))
    Class = Method->getParent()->getName();
  if (((Class == "grid_group" || Class == "multi_grid_group") &&
       Name == "sync") ||
      Name == "this_grid" || Name == "this_multi_grid")
    return KernelHazards::WholeGrid;
  if (Class == "cluster_group" || Name == "this_cluster")
    return KernelHazards::Clusters;
  if (Name == "cudaLaunchDevice" || Name == "cudaLaunchDeviceV2")
    return KernelHazards::DeviceLaunches;
  return {};
}

bool KernelHazards::isKernelQuery(llvm::StringRef CalleeName) {
  return CalleeName.starts_with("cudaOccupancy") ||
         CalleeName.starts_with("cudaFuncGet") ||
         CalleeName.starts_with("cudaFuncSet");
}

bool KernelHazards::readsPhysicalBlockId(llvm::StringRef AsmString) {
  return AsmString.contains("ctaid") || AsmString.contains("nctaid") ||
         AsmString.contains("clusterid") || AsmString.contains("cluster_ctaid");
}

bool KernelHazards::exitsThread(llvm::StringRef AsmString) {
  // `exit` as an instruction: a whole word, not part of a name.
  for (size_t Pos = AsmString.find("exit"); Pos != llvm::StringRef::npos;
       Pos = AsmString.find("exit", Pos + 1)) {
    auto IsWordChar = [](char C) {
      return llvm::isAlnum(C) || C == '_' || C == '.' || C == '%' || C == '$';
    };
    const bool Before = Pos > 0 && IsWordChar(AsmString[Pos - 1]);
    const bool After =
        Pos + 4 < AsmString.size() && IsWordChar(AsmString[Pos + 4]);
    if (!Before && !After)
      return true;
  }
  return false;
}

void KernelHazards::registerMatchers(MatchFinder &Finder) {
  auto InDeviceCode = forFunction(functionDecl(runsOnDevice()).bind("fn"));
  Finder.addMatcher(cudaKernelCallExpr(InDeviceCode).bind("launch"), this);
  Finder.addMatcher(callExpr(InDeviceCode).bind("call"), this);
  // Every use of a kernel's name, for the cluster attributes set on it.
  Finder.addMatcher(
      declRefExpr(to(functionDecl(hasAttr(attr::CUDAGlobal)).bind("named")))
          .bind("nameuse"),
      this);
  Finder.addMatcher(asmStmt(InDeviceCode).bind("asm"), this);
  Finder.addMatcher(
      functionDecl(hasAttr(attr::CUDAGlobal), hasAttr(attr::CUDAClusterDims))
          .bind("cluster"),
      this);
}

using NameUse = KernelHazards::NameUse;

/// True if a call passes an enumerator that names a thread-block cluster
/// attribute (cudaFuncAttributeRequiredClusterWidth, ...).
static bool passesClusterAttribute(const CallExpr &Call) {
  return llvm::any_of(Call.arguments(), [](const Expr *Arg) {
    const auto *Ref = dyn_cast<DeclRefExpr>(Arg->IgnoreParenImpCasts());
    return Ref && isa<EnumConstantDecl>(Ref->getDecl()) &&
           Ref->getDecl()->getName().contains("Cluster");
  });
}

static NameUse classifyUse(const Stmt &Child, ASTContext &AST,
                           const CallExpr *&Api);

/// What one parent of a kernel name's use (or of a cast around it) makes of
/// it.
static NameUse classifyParent(const Stmt &Child, const Stmt *P, ASTContext &AST,
                              const CallExpr *&Api) {
  if (!P)
    return NameUse::Escape;
  if (const auto *Launch = dyn_cast<CUDAKernelCallExpr>(P))
    return Launch->getCallee() == &Child ? NameUse::Launch : NameUse::Escape;
  if (const auto *Call = dyn_cast<CallExpr>(P)) {
    const FunctionDecl *Callee = Call->getDirectCallee();
    if (!Callee || !Callee->getIdentifier() || Call->getCallee() == &Child)
      return NameUse::Escape;
    llvm::StringRef Name = Callee->getName();
    // A required cluster size makes every launch a cluster launch: the
    // persistent grid is neither sized in whole clusters nor kept
    // co-scheduled.
    if (Name.starts_with("cudaFuncSet") && passesClusterAttribute(*Call))
      return NameUse::ClusterAttribute;
    // cudaGetFuncBySymbol is not a query: the handle it returns launches
    // through cuLaunchKernel with the original argument list.
    if (KernelHazards::isKernelQuery(Name))
      return NameUse::Query;
    Api = Call;
    if (Name.starts_with("cudaLaunch") || Name.starts_with("cuLaunch") ||
        Name.starts_with("cudaGraphAddKernelNode"))
      return NameUse::LaunchApi;
    return NameUse::Escape;
  }
  if (!isa<ImplicitCastExpr, ParenExpr, UnaryOperator, CStyleCastExpr,
           CXXNamedCastExpr, CXXFunctionalCastExpr>(P))
    return NameUse::Escape;
  return classifyUse(*P, AST, Api);
}

static NameUse classifyUse(const Stmt &Child, ASTContext &AST,
                           const CallExpr *&Api) {
  return agreedOverParents(Child, AST, NameUse::Escape, [&](const Stmt *P) {
    return classifyParent(Child, P, AST, Api);
  });
}

KernelHazards::NameUse KernelHazards::classifyNameUse(const DeclRefExpr &Use,
                                                      ASTContext &AST,
                                                      const CallExpr *&Api) {
  return classifyUse(Use, AST, Api);
}

void KernelHazards::run(const MatchFinder::MatchResult &Result) {
  if (const auto *Use = Result.Nodes.getNodeAs<DeclRefExpr>("nameuse")) {
    const auto *Named = Result.Nodes.getNodeAs<FunctionDecl>("named");
    const SourceManager &SM = *Result.SourceManager;
    const FunctionDecl *Pattern = RewriteContext::patternOf(Named);
    if (!Ctx.isRewritable(SM, Pattern->getLocation()) ||
        RewriteContext::isGeneratedKernel(*Pattern))
      return;
    const CallExpr *Api = nullptr;
    if (classifyNameUse(*Use, *Result.Context, Api) !=
        NameUse::ClusterAttribute)
      return;
    const Place At = RewriteContext::placeOf(SM, Use->getBeginLoc());
    Ctx.functionFacts(SM, Pattern)
        .Hazards.insert({"given a thread-block cluster attribute at line " +
                             std::to_string(At.Line) +
                             ": the hardware co-schedules a cluster's CTAs, "
                             "which the persistent form does not keep",
                         RewriteContext::placeOf(SM, Pattern->getLocation()),
                         {{At, "cluster attribute set here"}},
                         Clusters});
    return;
  }
  const auto *Fn = Result.Nodes.getNodeAs<FunctionDecl>("fn");
  const SourceManager &SM = *Result.SourceManager;
  if (const auto *K = Result.Nodes.getNodeAs<FunctionDecl>("cluster")) {
    if (!Ctx.isRewritable(SM, K->getLocation()))
      return;
    Ctx.functionFacts(SM, K).Hazards.insert(
        {"thread-block cluster (__cluster_dims__): the hardware co-schedules "
         "a cluster's CTAs, which the persistent form does not keep",
         RewriteContext::placeOf(SM, K->getLocation()),
         {},
         Clusters});
    return;
  }
  if (!Fn || !Ctx.isRewritable(SM, Fn->getLocation()))
    return;
  Hazard H;
  if (const auto *Launch =
          Result.Nodes.getNodeAs<CUDAKernelCallExpr>("launch")) {
    H.Reason = "device-side kernel launch (dynamic parallelism)";
    H.Where = RewriteContext::placeOf(SM, Launch->getBeginLoc());
    H.RunsFree = DeviceLaunches;
    // The launched kernel keeps its signature for this launch to compile.
    if (const FunctionDecl *Child = Launch->getDirectCallee())
      if (Ctx.isRewritable(SM, RewriteContext::patternOf(Child)->getLocation()))
        Ctx.functionFacts(SM, Child).Hazards.insert(
            {"launched from device code in '" + Fn->getQualifiedNameAsString() +
                 "' (dynamic parallelism)",
             H.Where,
             {},
             DeviceLaunches});
  } else if (const auto *Asm = Result.Nodes.getNodeAs<GCCAsmStmt>("asm")) {
    if (exitsThread(Asm->getAsmString())) {
      H.Reason = "inline asm executes `exit` (the thread would leave the "
                 "persistent loop)";
    } else if (readsPhysicalBlockId(Asm->getAsmString())) {
      H.Reason = "inline asm reads %ctaid/%nctaid";
    } else {
      return;
    }
    H.Where = RewriteContext::placeOf(SM, Asm->getAsmLoc());
  } else if (const auto *Call = Result.Nodes.getNodeAs<CallExpr>("call")) {
    if (isa<CUDAKernelCallExpr>(Call))
      return;
    H.Reason = gridDependentCall(*Call);
    if (H.Reason.empty())
      return;
    H.RunsFree = runsFreeFor(*Call);
    H.Where = RewriteContext::placeOf(SM, Call->getBeginLoc());
  }
  Ctx.functionFacts(SM, Fn).Hazards.insert(H);
}

} // namespace smpart
