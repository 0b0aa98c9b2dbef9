#include "analysis/BarrierHazard.h"

#include "analysis/DeviceCode.h"

#include "clang/AST/DeclCXX.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Analysis/CFG.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Regex.h"

#include <memory>
#include <vector>

using namespace clang;

namespace smpart {

bool isBlockBarrier(const CallExpr &Call) {
  const FunctionDecl *Callee = Call.getDirectCallee();
  if (!Callee || !Callee->getIdentifier())
    return false;
  llvm::StringRef Name = Callee->getName();
  if (llvm::StringSwitch<bool>(Name)
          .Cases({"__syncthreads", "__syncthreads_count", "__syncthreads_and",
                  "__syncthreads_or", "__barrier_sync"},
                 true)
          .Default(false))
    return true;
  // cooperative_groups: block.sync() and cg::sync(block).
  if (const auto *Method = dyn_cast<CXXMethodDecl>(Callee))
    return Name == "sync" && Method->getParent()->getName() == "thread_block";
  return Name == "sync" && Call.getNumArgs() == 1 &&
         Call.getArg(0)->getType()->getAsCXXRecordDecl() &&
         Call.getArg(0)->getType()->getAsCXXRecordDecl()->getName() ==
             "thread_block";
}

bool isWarpCollective(const CallExpr &Call) {
  const FunctionDecl *Callee = Call.getDirectCallee();
  if (!Callee || !Callee->getIdentifier())
    return false;
  llvm::StringRef Name = Callee->getName();
  if (llvm::StringSwitch<bool>(Name)
          .Cases({"__syncwarp", "__shfl_sync", "__shfl_up_sync",
                  "__shfl_down_sync", "__shfl_xor_sync", "__ballot_sync",
                  "__all_sync", "__any_sync", "__uni_sync", "__match_any_sync",
                  "__match_all_sync"},
                 true)
          .Default(false))
    return true;
  if (Name.starts_with("__reduce_") && Name.ends_with("_sync"))
    return true;
  // Cooperative-groups tiles and coalesced groups: their collectives.
  const bool TileCollective =
      llvm::StringSwitch<bool>(Name)
          .Cases({"sync", "shfl", "shfl_up", "shfl_down", "shfl_xor", "any",
                  "all", "ballot", "match_any", "match_all"},
                 true)
          .Default(false);
  if (const auto *Method = dyn_cast<CXXMethodDecl>(Callee)) {
    llvm::StringRef Class = Method->getParent()->getName();
    return TileCollective && inCooperativeGroups(*Method->getParent()) &&
           Class != "thread_block" && Class != "grid_group" &&
           Class != "multi_grid_group" && Class != "cluster_group";
  }
  // cg::sync(tile), cg::reduce(tile, ...), cg::inclusive_scan(tile, ...).
  if (inCooperativeGroups(*Callee) && Call.getNumArgs() >= 1 &&
      (Name == "sync" || Name == "reduce" || Name.ends_with("_scan")))
    if (const CXXRecordDecl *Arg =
            Call.getArg(0)->getType()->getAsCXXRecordDecl())
      return Arg->getName() != "thread_block" && Arg->getName() != "grid_group";
  return false;
}

Collective asmCollective(llvm::StringRef AsmString) {
  static const llvm::Regex Block(
      "(^|[^[:alnum:]_.])bar(rier)?(\\.cta)?\\.(sync|red)([^[:alnum:]_]|$)");
  static const llvm::Regex Warp("(^|[^[:alnum:]_.])(bar\\.warp|shfl|vote|match|"
                                "redux)(\\.[[:alnum:]_]+)*\\.sync");
  if (Block.match(AsmString))
    return Collective::Block;
  if (Warp.match(AsmString))
    return Collective::Warp;
  return Collective::None;
}

namespace {

/// The collective that binds more: a block barrier over a warp one.
Collective stronger(Collective A, Collective B) {
  return A == Collective::Block || B == Collective::None ? A : B;
}

/// Follows calls into bodies, memoised per function (recursion counts as
/// no collective until proven otherwise).
class CollectiveFinder {
public:
  CollectiveFinder(const ASTContext &Ctx, DispatchTargets *Targets)
      : Ctx(Ctx), Targets(Targets) {}

  Collective ofCall(const CallExpr &Call) {
    if (isBlockBarrier(Call))
      return Collective::Block;
    if (isWarpCollective(Call))
      return Collective::Warp;
    // A call through a pointer or a virtual call may reach any function
    // (a possible barrier), or only those DispatchTargets lists.
    if (dispatchesAtRunTime(Call)) {
      const auto Reached = Targets ? Targets->of(Call, Ctx) : std::nullopt;
      if (!Reached)
        return Collective::Block;
      Collective Found = Collective::None;
      for (const FunctionDecl *Fn : *Reached)
        Found = stronger(Found, ofFunction(*Fn));
      return Found;
    }
    const FunctionDecl *Callee = Call.getDirectCallee();
    if (!Callee)
      Callee = boundFunction(*Call.getCallee());
    if (!Callee)
      return Collective::None; // unresolved in a template pattern
    return ofFunction(*Callee);
  }

  /// Calls, constructor calls (their bodies are followed) and inline asm.
  Collective ofStmt(const Stmt &S) {
    if (const auto *C = dyn_cast<CallExpr>(&S))
      return ofCall(*C);
    if (const auto *Construct = dyn_cast<CXXConstructExpr>(&S)) {
      const CXXConstructorDecl *Ctor = Construct->getConstructor();
      return Ctor && !Ctor->isTrivial() ? ofFunction(*Ctor) : Collective::None;
    }
    if (const auto *Asm = dyn_cast<GCCAsmStmt>(&S))
      return asmCollective(Asm->getAsmString());
    return Collective::None;
  }

  Collective ofFunction(const FunctionDecl &Fn) {
    const FunctionDecl *Def = nullptr;
    if (!Fn.hasBody(Def) || !Def) {
      if (const FunctionDecl *P = Fn.getTemplateInstantiationPattern())
        if (P->hasBody(Def) && Def)
          return ofFunction(*Def);
      if (Fn.getBuiltinID() || Fn.getLocation().isInvalid() ||
          declaredByToolkit(Fn.getLocation()))
        return Collective::None;
      // A device function defined elsewhere may synchronise.
      return Fn.hasAttr<CUDADeviceAttr>() || Fn.hasAttr<CUDAGlobalAttr>()
                 ? Collective::Block
                 : Collective::None;
    }
    auto It = Memo.find(Def);
    if (It != Memo.end())
      return It->second;
    Memo[Def] = Collective::None;
    Collective Found = Collective::None;
    // A destructor then runs its bases' and members' destructors.
    if (const auto *Dtor = dyn_cast<CXXDestructorDecl>(Def))
      for (const CXXDestructorDecl *Part : partDestructors(*Dtor->getParent()))
        Found = stronger(Found, ofFunction(*Part));
    std::vector<const Stmt *> Work{Def->getBody()};
    while (!Work.empty() && Found != Collective::Block) {
      const Stmt *S = Work.back();
      Work.pop_back();
      if (!S)
        continue;
      Found = stronger(Found, ofStmt(*S));
      for (const Stmt *Child : S->children())
        Work.push_back(Child);
    }
    Memo[Def] = Found;
    return Found;
  }

private:
  /// The toolkit's own declarations: its headers, clang's wrappers and the
  /// compatibility header smpart-transform pre-includes (which declares
  /// nvcc's intrinsics such as __stcs without bodies), all of them system
  /// headers to the parse. None of them synchronises unless isBlockBarrier
  /// or isWarpCollective names it.
  bool declaredByToolkit(SourceLocation Loc) const {
    return Ctx.getSourceManager().isInSystemHeader(Loc);
  }

  const ASTContext &Ctx;
  DispatchTargets *Targets;
  llvm::DenseMap<const FunctionDecl *, Collective> Memo;
};

} // namespace

Collective collectiveOf(const CallExpr &Call, const ASTContext &Ctx,
                        DispatchTargets *Targets) {
  CollectiveFinder Finder(Ctx, Targets);
  return Finder.ofCall(Call);
}

namespace {

/// Which values may differ between the threads of a CTA. A branch on a
/// uniform value sends the whole CTA the same way, so it cannot separate
/// threads that return from threads that go on to a barrier (and a barrier
/// under a divergent branch would already be wrong in the original kernel).
/// Varying: threadIdx, memory reads, calls, and locals computed from them,
/// or written where the value cannot be seen (an asm output, a call that
/// takes the local by reference, a method of a local object).
class Uniformity : public RecursiveASTVisitor<Uniformity> {
public:
  explicit Uniformity(Stmt *Body) {
    for (bool Changed = true; Changed;) {
      Changed = false;
      Stores.clear();
      TraverseStmt(Body);
      for (const auto &[Var, Value] : Stores)
        if (!Varying.count(Var) && (!Value || isVarying(Value))) {
          Varying.insert(Var);
          Changed = true;
        }
    }
  }

  bool isVarying(const Stmt *S) const {
    if (!S)
      return false;
    if (const auto *Ref = dyn_cast<DeclRefExpr>(S)) {
      const auto *V = dyn_cast<VarDecl>(Ref->getDecl());
      return V && (Varying.count(V) ||
                   (V->getName() == "threadIdx" && V->hasGlobalStorage()));
    }
    if (isa<ArraySubscriptExpr>(S) || isa<CallExpr>(S))
      return true;
    if (const auto *UO = dyn_cast<UnaryOperator>(S);
        UO && UO->getOpcode() == UO_Deref)
      return true;
    if (const auto *ME = dyn_cast<MemberExpr>(S); ME && ME->isArrow())
      return true;
    for (const Stmt *Child : S->children())
      if (isVarying(Child))
        return true;
    return false;
  }

  bool VisitVarDecl(VarDecl *V) {
    if (!V->hasLocalStorage() || !V->getInit())
      return true;
    Stores.push_back({V, V->getInit()});
    // `int &r = i;`: what is stored through r is stored in i.
    if (V->getType()->isReferenceType() &&
        !V->getType().getNonReferenceType().isConstQualified())
      if (const VarDecl *W = varOf(V->getInit()); W && W != V)
        Stores.push_back({W, nullptr});
    return true;
  }
  bool VisitCallExpr(CallExpr *Call) {
    // A local the callee may write: passed by non-const reference
    // (`get_tid(i)`), or the object of a non-const method or operator.
    const FunctionDecl *Callee = Call->getDirectCallee();
    unsigned First = 0;
    if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(Call);
        Op && isa_and_nonnull<CXXMethodDecl>(Callee)) {
      if (const VarDecl *V = varOf(Call->getArg(0)))
        Stores.push_back({V, Op->isAssignmentOp() && Call->getNumArgs() > 1
                                 ? Call->getArg(1)
                                 : nullptr});
      First = 1; // the object is not one of the method's parameters
    }
    if (const auto *M = dyn_cast<CXXMemberCallExpr>(Call)) {
      const CXXMethodDecl *Method = M->getMethodDecl();
      if (!Method || !Method->isConst())
        if (const VarDecl *V = varOf(M->getImplicitObjectArgument()))
          Stores.push_back({V, nullptr});
    }
    for (unsigned I = First; I < Call->getNumArgs(); ++I) {
      const VarDecl *V = varOf(Call->getArg(I));
      if (!V)
        continue;
      const unsigned Param = I - First;
      bool ByReference = !Callee; // through a pointer: unknown
      if (Callee && Param < Callee->getNumParams()) {
        const QualType T = Callee->getParamDecl(Param)->getType();
        ByReference =
            T->isReferenceType() && !T.getNonReferenceType().isConstQualified();
      }
      if (ByReference)
        Stores.push_back({V, nullptr});
    }
    return true;
  }
  bool VisitGCCAsmStmt(GCCAsmStmt *Asm) {
    // An asm output may read anything: %tid, %laneid, %clock.
    for (unsigned I = 0; I < Asm->getNumOutputs(); ++I)
      if (const VarDecl *V = varOf(Asm->getOutputExpr(I)))
        Stores.push_back({V, nullptr});
    return true;
  }
  bool VisitBinaryOperator(BinaryOperator *BO) {
    if (BO->isAssignmentOp())
      if (const VarDecl *V = varOf(BO->getLHS()))
        Stores.push_back({V, BO->getRHS()});
    return true;
  }
  bool VisitUnaryOperator(UnaryOperator *UO) {
    // A local whose address is taken may be written anywhere.
    if (UO->getOpcode() == UO_AddrOf)
      if (const VarDecl *V = varOf(UO->getSubExpr()))
        Stores.push_back({V, nullptr});
    return true;
  }

private:
  /// The local a store lands in: a member of a local object (`s.x = ...`)
  /// counts as the object, a whole.
  static const VarDecl *varOf(const Expr *E) {
    E = E->IgnoreParenImpCasts();
    while (const auto *ME = dyn_cast<MemberExpr>(E)) {
      if (ME->isArrow())
        return nullptr;
      E = ME->getBase()->IgnoreParenImpCasts();
    }
    const auto *Ref = dyn_cast<DeclRefExpr>(E);
    return Ref ? dyn_cast<VarDecl>(Ref->getDecl()) : nullptr;
  }

  llvm::DenseSet<const VarDecl *> Varying;
  std::vector<std::pair<const VarDecl *, const Expr *>> Stores;
};

/// The first return and the first call of a collective (of the kind
/// looked for) inside one CFG block's elements.
struct BlockSummary {
  const ReturnStmt *Return = nullptr;
  const Stmt *Barrier = nullptr;
};

BlockSummary summarize(const CFGBlock &Block, CollectiveFinder &Finder,
                       Collective Kind) {
  BlockSummary S;
  for (const CFGElement &E : Block) {
    std::optional<CFGStmt> CS = E.getAs<CFGStmt>();
    if (!CS)
      continue;
    const Stmt *St = CS->getStmt();
    if (const auto *R = dyn_cast<ReturnStmt>(St); R && !S.Return)
      S.Return = R;
    if (!S.Barrier && Finder.ofStmt(*St) == Kind)
      S.Barrier = St;
  }
  return S;
}

} // namespace

static std::optional<BarrierAfterReturn>
findCollectiveAfterReturn(Stmt *Body, CFG *Graph, CollectiveFinder &Finder,
                          Collective Kind) {
  const unsigned N = Graph->getNumBlockIDs();
  std::vector<BlockSummary> Summary(N);
  std::vector<const CFGBlock *> Blocks(N);
  bool AnyReturn = false, AnyBarrier = false;
  for (const CFGBlock *B : *Graph) {
    Summary[B->getBlockID()] = summarize(*B, Finder, Kind);
    Blocks[B->getBlockID()] = B;
    AnyReturn |= Summary[B->getBlockID()].Return != nullptr;
    AnyBarrier |= Summary[B->getBlockID()].Barrier != nullptr;
  }
  if (!AnyReturn || !AnyBarrier)
    return std::nullopt;

  // Blocks reachable (in one or more steps) from Start; with StopAtBarrier,
  // paths end at blocks that hold a barrier (a thread passing it has not
  // left the others behind yet).
  auto reachableFrom = [&](const CFGBlock *Start, bool StopAtBarrier) {
    llvm::BitVector Seen(N);
    std::vector<const CFGBlock *> Work;
    for (const CFGBlock *S : Start->succs())
      if (S)
        Work.push_back(S);
    while (!Work.empty()) {
      const CFGBlock *B = Work.back();
      Work.pop_back();
      if (Seen.test(B->getBlockID()))
        continue;
      Seen.set(B->getBlockID());
      if (StopAtBarrier && Summary[B->getBlockID()].Barrier)
        continue;
      for (const CFGBlock *S : B->succs())
        if (S)
          Work.push_back(S);
    }
    return Seen;
  };

  Uniformity Uniform(Body);
  for (const CFGBlock *Branch : *Graph) {
    if (Branch->succ_size() < 2)
      continue;
    // A uniform branch (a loop over tiles, `s > 0` in a tree reduction)
    // does not split the CTA.
    const Stmt *Condition = Branch->getTerminatorCondition();
    if (Condition && !Uniform.isVarying(Condition))
      continue;
    // Some thread can return from here without meeting a barrier...
    const ReturnStmt *Return = nullptr;
    for (unsigned Id : reachableFrom(Branch, /*StopAtBarrier=*/true).set_bits())
      if (Summary[Id].Return && !Summary[Id].Barrier) {
        Return = Summary[Id].Return;
        break;
      }
    if (!Return)
      continue;
    // ...while another goes on to one.
    const Stmt *Barrier = nullptr;
    for (unsigned Id :
         reachableFrom(Branch, /*StopAtBarrier=*/false).set_bits())
      if (Summary[Id].Barrier) {
        Barrier = Summary[Id].Barrier;
        break;
      }
    if (Return && Barrier) {
      BarrierAfterReturn H{Return, Barrier, Kind, nullptr};
      if (const auto *Call = dyn_cast<CallExpr>(Barrier);
          Call && !isBlockBarrier(*Call) && !isWarpCollective(*Call))
        H.Via = Call->getDirectCallee() ? Call->getDirectCallee()
                                        : boundFunction(*Call->getCallee());
      return H;
    }
  }
  return std::nullopt;
}

std::optional<BarrierAfterReturn>
findBarrierAfterReturn(const FunctionDecl &Kernel, ASTContext &Ctx,
                       DispatchTargets *Targets) {
  Stmt *Body = Kernel.getBody();
  if (!Body)
    return std::nullopt;
  CFG::BuildOptions Options;
  std::unique_ptr<CFG> Graph = CFG::buildCFG(&Kernel, Body, &Ctx, Options);
  if (!Graph)
    return std::nullopt;
  CollectiveFinder Finder(Ctx, Targets);
  for (Collective Kind : {Collective::Block, Collective::Warp})
    if (auto H = findCollectiveAfterReturn(Body, Graph.get(), Finder, Kind))
      return H;
  return std::nullopt;
}

} // namespace smpart
