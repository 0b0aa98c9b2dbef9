#include "analysis/BarrierHazard.h"

#include "clang/AST/DeclCXX.h"
#include "clang/AST/ExprCXX.h"
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

  // Blocks reachable (in one or more steps) from each block.
  auto reachableFrom = [&](const CFGBlock *Start) {
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
      for (const CFGBlock *S : B->succs())
        if (S)
          Work.push_back(S);
    }
    return Seen;
  };

  for (const CFGBlock *Branch : *Graph) {
    if (Branch->succ_size() < 2)
      continue;
    llvm::BitVector Reach = reachableFrom(Branch);
    const ReturnStmt *Return = nullptr;
    const CallExpr *Barrier = nullptr;
    for (unsigned Id : Reach.set_bits()) {
      if (!Return && Summary[Id].Return)
        Return = Summary[Id].Return;
      // A barrier in the returning block itself runs before the return.
      if (!Barrier && Summary[Id].Barrier && !Summary[Id].Return)
        Barrier = Summary[Id].Barrier;
    }
    if (Return && Barrier)
      return BarrierAfterReturn{Return, Barrier};
  }
  return std::nullopt;
}

} // namespace smpart
