#include "analysis/GlobalPointerProvenance.h"

#include "clang/AST/Attr.h"
#include "clang/AST/RecursiveASTVisitor.h"

using namespace clang;

namespace smpart {
namespace {

const VarDecl *pointerVar(const Expr *E) {
  const auto *Ref = dyn_cast<DeclRefExpr>(E->IgnoreParenImpCasts());
  if (!Ref)
    return nullptr;
  const auto *V = dyn_cast<VarDecl>(Ref->getDecl());
  return V && V->getType()->isPointerType() ? V : nullptr;
}

class StoreCollector : public RecursiveASTVisitor<StoreCollector> {
public:
  StoreCollector(llvm::DenseMap<const VarDecl *,
                                llvm::SmallVector<const Expr *, 2>> &Stores,
                 llvm::DenseSet<const VarDecl *> &Escaped)
      : Stores(Stores), Escaped(Escaped) {}

  bool VisitBinaryOperator(BinaryOperator *BO) {
    if (BO->getOpcode() == BO_Assign)
      if (const VarDecl *V = pointerVar(BO->getLHS()))
        Stores[V].push_back(BO->getRHS());
    return true;
  }
  bool VisitUnaryOperator(UnaryOperator *UO) {
    if (UO->getOpcode() == UO_AddrOf)
      if (const VarDecl *V = pointerVar(UO->getSubExpr()))
        Escaped.insert(V);
    return true;
  }
  bool VisitVarDecl(VarDecl *VD) {
    // A reference bound to a pointer variable can write it unseen.
    if (VD->getType()->isReferenceType() && VD->getInit())
      if (const VarDecl *V = pointerVar(VD->getInit()))
        Escaped.insert(V);
    return true;
  }

private:
  llvm::DenseMap<const VarDecl *, llvm::SmallVector<const Expr *, 2>> &Stores;
  llvm::DenseSet<const VarDecl *> &Escaped;
};

} // namespace

GlobalPointerProvenance::GlobalPointerProvenance(const FunctionDecl &Kernel)
    : Kernel(Kernel) {
  if (Stmt *Body = Kernel.getBody())
    StoreCollector(Stores, Escaped).TraverseStmt(Body);
}

bool GlobalPointerProvenance::isGlobal(const Expr *Pointer) const {
  llvm::DenseSet<const VarDecl *> InProgress;
  return isGlobal(Pointer, InProgress);
}

bool GlobalPointerProvenance::isGlobalVar(
    const VarDecl *V, llvm::DenseSet<const VarDecl *> &InProgress) const {
  if (!V->getType()->isPointerType() || Escaped.count(V) ||
      V->getType()->getPointeeType().isVolatileQualified())
    return false;
  // A cycle (p = p + 1) adds no new source: assume global and let the other
  // stores decide.
  if (!InProgress.insert(V).second)
    return true;
  if (const auto *Param = dyn_cast<ParmVarDecl>(V)) {
    if (Param->getDeclContext() != &Kernel)
      return false;
  } else {
    if (!V->hasLocalStorage() || V->hasAttr<CUDASharedAttr>() ||
        !V->getInit() || !isGlobal(V->getInit(), InProgress))
      return false;
  }
  auto It = Stores.find(V);
  if (It != Stores.end())
    for (const Expr *Source : It->second)
      if (!isGlobal(Source, InProgress))
        return false;
  return true;
}

bool GlobalPointerProvenance::isGlobal(
    const Expr *E, llvm::DenseSet<const VarDecl *> &InProgress) const {
  E = E->IgnoreParens();
  if (const auto *Cast = dyn_cast<CastExpr>(E)) {
    switch (Cast->getCastKind()) {
    case CK_NoOp:
    case CK_BitCast:
    case CK_LValueToRValue:
      return Cast->getSubExpr()->getType()->isPointerType() &&
             isGlobal(Cast->getSubExpr(), InProgress);
    default:
      return false; // array decay (locals, __shared__), integer casts, ...
    }
  }
  if (const auto *Ref = dyn_cast<DeclRefExpr>(E)) {
    const auto *V = dyn_cast<VarDecl>(Ref->getDecl());
    return V && isGlobalVar(V, InProgress);
  }
  if (const auto *BO = dyn_cast<BinaryOperator>(E)) {
    switch (BO->getOpcode()) {
    case BO_Add:
    case BO_Sub:
      if (BO->getLHS()->getType()->isPointerType())
        return isGlobal(BO->getLHS(), InProgress);
      return BO->getRHS()->getType()->isPointerType() &&
             isGlobal(BO->getRHS(), InProgress);
    case BO_Assign:
    case BO_AddAssign:
    case BO_SubAssign:
      return isGlobal(BO->getLHS(), InProgress);
    case BO_Comma:
      return isGlobal(BO->getRHS(), InProgress);
    default:
      return false;
    }
  }
  if (const auto *UO = dyn_cast<UnaryOperator>(E)) {
    switch (UO->getOpcode()) {
    case UO_PreInc:
    case UO_PreDec:
    case UO_PostInc:
    case UO_PostDec:
      return isGlobal(UO->getSubExpr(), InProgress);
    case UO_AddrOf: {
      // &p[i] and &*p point where p points.
      const Expr *Sub = UO->getSubExpr()->IgnoreParens();
      if (const auto *AS = dyn_cast<ArraySubscriptExpr>(Sub))
        return AS->getBase()->getType()->isPointerType() &&
               isGlobal(AS->getBase(), InProgress);
      if (const auto *Deref = dyn_cast<UnaryOperator>(Sub))
        if (Deref->getOpcode() == UO_Deref)
          return isGlobal(Deref->getSubExpr(), InProgress);
      return false;
    }
    default:
      return false;
    }
  }
  if (const auto *Cond = dyn_cast<ConditionalOperator>(E))
    return isGlobal(Cond->getTrueExpr(), InProgress) &&
           isGlobal(Cond->getFalseExpr(), InProgress);
  return false;
}

} // namespace smpart
