#include "analysis/BarrierHazard.h"

#include "clang/AST/DeclCXX.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "llvm/ADT/DenseSet.h"
#include "clang/Analysis/CFG.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/StringSwitch.h"

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

namespace {

/// Which values may differ between the threads of a CTA. A branch on a
/// uniform value sends the whole CTA the same way, so it cannot separate
/// threads that return from threads that go on to a barrier (and a barrier
/// under a divergent branch would already be wrong in the original kernel).
/// Varying: threadIdx, memory reads, calls, and locals computed from them.
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
      return V && (Varying.count(V) || (V->getName() == "threadIdx" &&
                                        V->hasGlobalStorage()));
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
    if (V->hasLocalStorage() && V->getInit())
      Stores.push_back({V, V->getInit()});
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
  static const VarDecl *varOf(const Expr *E) {
    const auto *Ref = dyn_cast<DeclRefExpr>(E->IgnoreParenImpCasts());
    return Ref ? dyn_cast<VarDecl>(Ref->getDecl()) : nullptr;
  }

  llvm::DenseSet<const VarDecl *> Varying;
  std::vector<std::pair<const VarDecl *, const Expr *>> Stores;
};

/// Finds the first call to a barrier and the first return inside one CFG
/// block's elements.
struct BlockSummary {
  const ReturnStmt *Return = nullptr;
  const CallExpr *Barrier = nullptr;
};

BlockSummary summarize(const CFGBlock &Block) {
  BlockSummary S;
  for (const CFGElement &E : Block) {
    std::optional<CFGStmt> CS = E.getAs<CFGStmt>();
    if (!CS)
      continue;
    const Stmt *St = CS->getStmt();
    if (const auto *R = dyn_cast<ReturnStmt>(St); R && !S.Return)
      S.Return = R;
    if (const auto *C = dyn_cast<CallExpr>(St);
        C && !S.Barrier && isBlockBarrier(*C))
      S.Barrier = C;
  }
  return S;
}

} // namespace

std::optional<BarrierAfterReturn>
findBarrierAfterReturn(const FunctionDecl &Kernel, ASTContext &Ctx) {
  Stmt *Body = Kernel.getBody();
  if (!Body)
    return std::nullopt;
  CFG::BuildOptions Options;
  std::unique_ptr<CFG> Graph =
      CFG::buildCFG(&Kernel, Body, &Ctx, Options);
  if (!Graph)
    return std::nullopt;

  const unsigned N = Graph->getNumBlockIDs();
  std::vector<BlockSummary> Summary(N);
  std::vector<const CFGBlock *> Blocks(N);
  bool AnyReturn = false, AnyBarrier = false;
  for (const CFGBlock *B : *Graph) {
    Summary[B->getBlockID()] = summarize(*B);
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
    const CallExpr *Barrier = nullptr;
    for (unsigned Id : reachableFrom(Branch, /*StopAtBarrier=*/false).set_bits())
      if (Summary[Id].Barrier) {
        Barrier = Summary[Id].Barrier;
        break;
      }
    if (Return && Barrier)
      return BarrierAfterReturn{Return, Barrier};
  }
  return std::nullopt;
}

} // namespace smpart
