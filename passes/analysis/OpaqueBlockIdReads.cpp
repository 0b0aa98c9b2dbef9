#include "analysis/OpaqueBlockIdReads.h"

#include "analysis/DeviceCode.h"
#include "analysis/KernelHazards.h"

#include "clang/AST/Attr.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"

#include <utility>

using namespace clang;

namespace smpart {

static bool inRuntimeNamespace(const Decl &D) {
  const NamespaceDecl *Outermost = nullptr;
  for (const DeclContext *C = D.getDeclContext(); C; C = C->getParent())
    if (const auto *NS = dyn_cast<NamespaceDecl>(C))
      Outermost = NS;
  return Outermost && Outermost->getName() == "smpart";
}

bool OpaqueBlockIdReads::isRuntimeFunction(const FunctionDecl &Fn) {
  return inRuntimeNamespace(Fn);
}

bool OpaqueBlockIdReads::isLogicalBlockQuery(const FunctionDecl &Fn) {
  if (!Fn.getIdentifier() ||
      (Fn.getName() != "blockIdx" && Fn.getName() != "gridDim"))
    return false;
  const auto *NS = dyn_cast<NamespaceDecl>(Fn.getDeclContext());
  return NS && NS->getName() == "smpart" &&
         NS->getDeclContext()->isTranslationUnit();
}

/// A read that ends a walk: nothing found later changes the verdict.
static bool final(const OpaqueBlockIdReads::Read &R) {
  return R.What == OpaqueBlockIdReads::Kind::Physical ||
         R.What == OpaqueBlockIdReads::Kind::Dispatched;
}

namespace {
/// Walks one body; what it calls goes back through OpaqueBlockIdReads::of.
class BodyWalker : public RecursiveASTVisitor<BodyWalker> {
public:
  BodyWalker(OpaqueBlockIdReads &Reads, const FunctionDecl &Fn)
      : Reads(Reads), Fn(Fn) {}

  OpaqueBlockIdReads::Read Found;

  /// A lambda's body runs where it is called (its operator(), followed);
  /// its captures are initialised here.
  bool TraverseLambdaExpr(LambdaExpr *Lambda) {
    for (Expr *Init : Lambda->capture_inits())
      if (Init && !TraverseStmt(Init))
        return false;
    return true;
  }

  /// Operands that are never evaluated run nothing.
  bool TraverseUnaryExprOrTypeTraitExpr(UnaryExprOrTypeTraitExpr *) {
    return true;
  }
  bool TraverseCXXNoexceptExpr(CXXNoexceptExpr *) { return true; }
  bool TraverseDecltypeTypeLoc(DecltypeTypeLoc, bool) { return true; }

  bool VisitDeclRefExpr(DeclRefExpr *Ref) {
    // A function named is called here or through what it is passed to.
    if (const auto *Named = dyn_cast<FunctionDecl>(Ref->getDecl()))
      return Named->hasAttr<CUDAGlobalAttr>() || follow(Named);
    const auto *Var = dyn_cast<VarDecl>(Ref->getDecl());
    if (Var && Var->getIdentifier() &&
        (Var->getName() == "blockIdx" || Var->getName() == "gridDim") &&
        Var->getDeclContext()->isTranslationUnit())
      return physical(&Fn, Ref->getLocation());
    return true;
  }
  bool VisitGCCAsmStmt(GCCAsmStmt *Asm) {
    if (KernelHazards::readsPhysicalBlockId(Asm->getAsmString()))
      return physical(&Fn, Asm->getAsmLoc());
    return true;
  }
  bool VisitCallExpr(CallExpr *Call) {
    // The toolkit's own calls through pointers (customisation points,
    // type-erased callbacks) are its business; its reads of the block
    // index are direct and found below.
    if (dispatchesAtRunTime(*Call) && checkedForDispatch(Fn, *Call) &&
        !inSystemHeader())
      return dispatched(Call->getBeginLoc());
    const FunctionDecl *Callee = Call->getDirectCallee();
    if (!Callee)
      return true;
    if (passesFunctionPointer(*Call, *Callee))
      return dispatched(Call->getBeginLoc());
    // __nvvm_read_ptx_sreg_ctaid_x(), ..._clusterid_x() and their kin.
    if (Callee->getBuiltinID() && Callee->getIdentifier() &&
        KernelHazards::readsPhysicalBlockId(Callee->getName()))
      return physical(&Fn, Call->getBeginLoc());
    // Cooperative groups dispatch on the group's kind at run time (a
    // thread_group's size() reads gridDim if it is a grid): what depends
    // on the physical grid is what makes such a group (KernelHazards).
    if (inCooperativeGroups(*Callee))
      return KernelHazards::gridDependentCall(*Call).empty()
                 ? true
                 : physical(&Fn, Call->getBeginLoc());
    return follow(Callee);
  }
  bool VisitCXXConstructExpr(CXXConstructExpr *Construct) {
    if (passesFunctionPointer(*Construct, *Construct->getConstructor()))
      return dispatched(Construct->getBeginLoc());
    return follow(Construct->getConstructor());
  }
  // What runs without a call in the text: default arguments and member
  // initialisers (their expressions are not children of the call or the
  // constructor), and destructors.
  bool VisitCXXDefaultArgExpr(CXXDefaultArgExpr *Arg) {
    return TraverseStmt(Arg->getExpr());
  }
  bool VisitCXXDefaultInitExpr(CXXDefaultInitExpr *Init) {
    return TraverseStmt(Init->getExpr());
  }
  bool VisitVarDecl(VarDecl *Var) {
    if (const CXXRecordDecl *R = Var->getType()->getAsCXXRecordDecl())
      if (R->hasDefinition())
        if (const CXXDestructorDecl *D = R->getDestructor())
          return follow(D);
    return true;
  }
  bool VisitCXXBindTemporaryExpr(CXXBindTemporaryExpr *Temp) {
    if (const CXXDestructorDecl *D = Temp->getTemporary()->getDestructor())
      return follow(D);
    return true;
  }

private:
  bool inSystemHeader() const {
    const SourceManager &SM = Fn.getASTContext().getSourceManager();
    return SM.isInSystemHeader(SM.getSpellingLoc(Fn.getLocation()));
  }
  /// A function pointer given to an instantiation, whose calls through
  /// it are not checked there (DeviceCode.h).
  bool passesFunctionPointer(const Expr &Call, const FunctionDecl &Callee) {
    return isInstantiation(Callee) && checkedForDispatch(Fn) &&
           !inSystemHeader() && passedFunctionPointer(Call);
  }
  bool dispatched(SourceLocation Where) {
    Found = {OpaqueBlockIdReads::Kind::Dispatched, &Fn, Where};
    return false;
  }
  bool physical(const FunctionDecl *Reader, SourceLocation Where) {
    Found = {OpaqueBlockIdReads::Kind::Physical, Reader, Where};
    return false; // the first is enough
  }
  bool follow(const FunctionDecl *Callee) {
    const OpaqueBlockIdReads::Read R = Reads.of(Callee);
    if (R.What == OpaqueBlockIdReads::Kind::Physical ||
        R.What == OpaqueBlockIdReads::Kind::Dispatched) {
      Found = R;
      return false;
    }
    if (R.What == OpaqueBlockIdReads::Kind::Logical)
      Found.What = R.What;
    return true;
  }

  OpaqueBlockIdReads &Reads;
  const FunctionDecl &Fn;
};
} // namespace

OpaqueBlockIdReads::Read OpaqueBlockIdReads::ofExpr(const Expr *E,
                                                    const FunctionDecl &In) {
  BodyWalker Walker(*this, In);
  Walker.TraverseStmt(const_cast<Expr *>(E));
  return Walker.Found;
}

OpaqueBlockIdReads::Read OpaqueBlockIdReads::of(const FunctionDecl *Fn) {
  if (isLogicalBlockQuery(*Fn))
    return {Kind::Logical, Fn, {}};
  // Cooperative groups are judged by the call (VisitCallExpr; from the
  // rewritten files, KernelHazards), not by their bodies.
  if (isRuntimeFunction(*Fn) || inCooperativeGroups(*Fn) || !runsOnDevice(*Fn))
    return {};
  const FunctionDecl *Definition = nullptr;
  if (!Fn->hasBody(Definition) || !Definition)
    return {};
  if (auto It = Memo.find(Definition); It != Memo.end())
    return It->second;
  // Recursion: a function being walked reads nothing more than what its
  // walk finds; what is found meanwhile is final only if it ends the walk
  // (a physical read, a call dispatched at run time), or once the
  // outermost walk of the cycle ends.
  if (!Walking.insert(Definition).second) {
    Cyclic = true;
    return {};
  }
  const bool OuterCyclic = std::exchange(Cyclic, false);
  BodyWalker Walker(*this, *Definition);
  // A constructor's initialisers run before its body: written ones, and
  // the members' and bases' own (default member initialisers, default
  // constructors).
  if (const auto *Ctor = dyn_cast<CXXConstructorDecl>(Definition))
    for (const CXXCtorInitializer *Init : Ctor->inits())
      if (!final(Walker.Found))
        Walker.TraverseStmt(Init->getInit());
  if (!final(Walker.Found))
    Walker.TraverseStmt(Definition->getBody());
  Walking.erase(Definition);
  if (final(Walker.Found) || !Cyclic || Walking.empty())
    Memo[Definition] = Walker.Found;
  Cyclic = OuterCyclic || (Cyclic && !Walking.empty());
  return Walker.Found;
}

} // namespace smpart
