#include "analysis/OpaqueBlockIdReads.h"

#include "analysis/KernelHazards.h"

#include "clang/AST/DeclCXX.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"

using namespace clang;

namespace smpart {

static bool inRuntimeNamespace(const Decl &D) {
  const NamespaceDecl *Outermost = nullptr;
  for (const DeclContext *C = D.getDeclContext(); C; C = C->getParent())
    if (const auto *NS = dyn_cast<NamespaceDecl>(C))
      Outermost = NS;
  return Outermost && Outermost->getName() == "smpart";
}

static bool inCooperativeGroups(const Decl &D) {
  for (const DeclContext *C = D.getDeclContext(); C; C = C->getParent())
    if (const auto *NS = dyn_cast<NamespaceDecl>(C);
        NS && NS->getName() == "cooperative_groups")
      return true;
  return false;
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

namespace {
/// Walks one body; what it calls goes back through OpaqueBlockIdReads::of.
class BodyWalker : public RecursiveASTVisitor<BodyWalker> {
public:
  BodyWalker(OpaqueBlockIdReads &Reads, const FunctionDecl &Fn)
      : Reads(Reads), Fn(Fn) {}

  OpaqueBlockIdReads::Read Found;

  bool VisitDeclRefExpr(DeclRefExpr *Ref) {
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
    const FunctionDecl *Callee = Call->getDirectCallee();
    if (!Callee)
      return true;
    // __nvvm_read_ptx_sreg_ctaid_x() and its kin.
    if (Callee->getBuiltinID() && Callee->getIdentifier() &&
        Callee->getName().contains("ctaid"))
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
    return follow(Construct->getConstructor());
  }

private:
  bool physical(const FunctionDecl *Reader, SourceLocation Where) {
    Found = {OpaqueBlockIdReads::Kind::Physical, Reader, Where};
    return false; // the first is enough
  }
  bool follow(const FunctionDecl *Callee) {
    const OpaqueBlockIdReads::Read R = Reads.of(Callee);
    if (R.What == OpaqueBlockIdReads::Kind::Physical) {
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

OpaqueBlockIdReads::Read OpaqueBlockIdReads::of(const FunctionDecl *Fn) {
  if (isLogicalBlockQuery(*Fn))
    return {Kind::Logical, Fn, {}};
  // Cooperative groups are judged by the call (VisitCallExpr; from the
  // rewritten files, KernelHazards), not by their bodies.
  if (isRuntimeFunction(*Fn) || inCooperativeGroups(*Fn))
    return {};
  const FunctionDecl *Definition = nullptr;
  if (!Fn->hasBody(Definition) || !Definition)
    return {};
  auto [It, New] = Memo.try_emplace(Definition);
  if (!New)
    return It->second; // known, or being walked (recursion)
  BodyWalker Walker(*this, *Definition);
  // A constructor's member initialisers run before its body.
  if (const auto *Ctor = dyn_cast<CXXConstructorDecl>(Definition))
    for (const CXXCtorInitializer *Init : Ctor->inits())
      if (Init->isWritten() && Walker.Found.What != Kind::Physical)
        Walker.TraverseStmt(Init->getInit());
  if (Walker.Found.What != Kind::Physical)
    Walker.TraverseStmt(Definition->getBody());
  Memo[Definition] = Walker.Found;
  return Walker.Found;
}

} // namespace smpart
