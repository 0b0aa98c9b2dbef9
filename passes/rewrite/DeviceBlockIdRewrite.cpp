#include "rewrite/DeviceBlockIdRewrite.h"

#include "analysis/DeviceCode.h"
#include "analysis/KernelHazards.h"

#include "clang/AST/Attr.h"
#include "clang/AST/Expr.h"
#include "clang/Lex/Lexer.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace smpart {

void DeviceBlockIdRewrite::registerMatchers(MatchFinder &Finder) {
  auto NotKernel = functionDecl(unless(hasAttr(attr::CUDAGlobal)));
  Finder.addMatcher(
      declRefExpr(to(varDecl(hasAnyName("::blockIdx", "::gridDim"))),
                  forFunction(NotKernel.bind("fn")))
          .bind("ref"),
      this);
  Finder.addMatcher(
      callExpr(
          forFunction(functionDecl().bind("caller")),
          callee(
              functionDecl(unless(hasAttr(attr::CUDAGlobal))).bind("callee")))
          .bind("call"),
      this);
  // A constructor runs device code too (an index helper built in a kernel),
  // and so does the destructor of a local or a temporary.
  Finder.addMatcher(
      cxxConstructExpr(forFunction(functionDecl().bind("caller")),
                       hasDeclaration(cxxConstructorDecl().bind("callee")))
          .bind("call"),
      this);
  Finder.addMatcher(
      varDecl(hasParent(declStmt(forFunction(functionDecl().bind("caller")))))
          .bind("local"),
      this);
  Finder.addMatcher(
      cxxBindTemporaryExpr(forFunction(functionDecl().bind("caller")))
          .bind("temporary"),
      this);
  // A function named here is called here or through what it is passed to
  // (a template that calls it, a pointer).
  Finder.addMatcher(
      declRefExpr(
          to(functionDecl(unless(hasAttr(attr::CUDAGlobal))).bind("callee")),
          forFunction(functionDecl().bind("caller")))
          .bind("named"),
      this);
  // `new` runs its allocation function (a class's own, perhaps).
  Finder.addMatcher(
      cxxNewExpr(forFunction(functionDecl(runsOnDevice()).bind("allocator")))
          .bind("new"),
      this);
  // `delete` runs the destructor of what it deletes (chosen at run time
  // where that destructor is virtual), then its deallocation function.
  Finder.addMatcher(
      cxxDeleteExpr(forFunction(functionDecl(runsOnDevice()).bind("deleter")))
          .bind("delete"),
      this);
  // A call whose target is chosen at run time cannot be followed.
  Finder.addMatcher(
      callExpr(forFunction(functionDecl(runsOnDevice()).bind("dispatcher")),
               // Not evaluated: sizeof, noexcept, decltype and other types.
               unless(hasAncestor(unaryExprOrTypeTraitExpr())),
               unless(hasAncestor(cxxNoexceptExpr())),
               unless(hasAncestor(typeLoc())))
          .bind("dispatch"),
      this);
}

void DeviceBlockIdRewrite::run(const MatchFinder::MatchResult &Result) {
  const SourceManager &SM = *Result.SourceManager;
  if (const auto *Ref = Result.Nodes.getNodeAs<DeclRefExpr>("ref")) {
    const auto *Fn = Result.Nodes.getNodeAs<FunctionDecl>("fn");
    if (!Ctx.isRewritable(SM, Fn->getLocation()))
      return;
    FunctionFacts &F = Ctx.functionFacts(SM, Fn);
    F.ReadsBlockId = true;
    std::string Name = Ref->getDecl()->getName().str();
    std::optional<Edit> E = RewriteContext::replace(
        SM, Ref->getLocation(),
        Ref->getLocation().getLocWithOffset(static_cast<int>(Name.size())),
        "smpart::" + Name + "()");
    if (E)
      F.Edits.insert(*E);
    else
      F.Hazards.insert({"reads " + Name + " through a macro",
                        RewriteContext::placeOf(SM, Ref->getLocation()),
                        {}});
    return;
  }
  if (const auto *New = Result.Nodes.getNodeAs<CXXNewExpr>("new")) {
    const auto *Fn = Result.Nodes.getNodeAs<FunctionDecl>("allocator");
    if (const FunctionDecl *Op = New->getOperatorNew();
        Op && checkedForDispatch(*Fn) &&
        Ctx.isRewritable(SM, Fn->getLocation()))
      follow(SM, *Fn, *Op, New->getBeginLoc(), nullptr, true);
    return;
  }
  if (const auto *Delete = Result.Nodes.getNodeAs<CXXDeleteExpr>("delete")) {
    const auto *Fn = Result.Nodes.getNodeAs<FunctionDecl>("deleter");
    const CXXRecordDecl *Class =
        Delete->getDestroyedType().isNull()
            ? nullptr
            : Delete->getDestroyedType()->getAsCXXRecordDecl();
    const CXXDestructorDecl *Dtor =
        Class && Class->hasDefinition() ? Class->getDestructor() : nullptr;
    // Followed wherever it is spelled (a SAFE_DELETE macro of a header
    // that is not rewritten): nothing here edits it.
    if (!checkedForDispatch(*Fn) || !Ctx.isRewritable(SM, Fn->getLocation()))
      return;
    // Where it is written, also when a macro spells it.
    const SourceLocation At = SM.getExpansionLoc(Delete->getBeginLoc());
    if (const FunctionDecl *Op = Delete->getOperatorDelete())
      follow(SM, *Fn, *Op, At, nullptr, true);
    if (!Dtor || Dtor->isTrivial())
      return;
    if (!Dtor->isVirtual() || Dtor->hasAttr<FinalAttr>() ||
        Class->hasAttr<FinalAttr>())
      follow(SM, *Fn, *Dtor, At, nullptr, true);
    else
      followDestruction(SM, *Fn, *Class, At, *Result.Context, "deletes");
    return;
  }
  if (const auto *Dispatch = Result.Nodes.getNodeAs<CallExpr>("dispatch")) {
    const auto *Fn = Result.Nodes.getNodeAs<FunctionDecl>("dispatcher");
    if (!dispatchesAtRunTime(*Dispatch) ||
        !checkedForDispatch(*Fn, *Dispatch) ||
        !Ctx.isRewritable(SM, Fn->getLocation()) ||
        !Ctx.isRewritable(SM, Dispatch->getBeginLoc()))
      return;
    if (const auto *Dtor =
            dyn_cast_or_null<CXXDestructorDecl>(Dispatch->getDirectCallee())) {
      followDestruction(SM, *Fn, *Dtor->getParent(), Dispatch->getBeginLoc(),
                        *Result.Context, "destroys");
      return;
    }
    if (const auto Targets = Dispatched.of(*Dispatch, *Result.Context)) {
      for (const FunctionDecl *Target : *Targets)
        follow(SM, *Fn, *Target, Dispatch->getBeginLoc(), nullptr, true);
      return;
    }
    Ctx.functionFacts(SM, Fn).Hazards.insert(
        {"calls through a function pointer or a virtual function, whose "
         "target may read the physical blockIdx/gridDim (smpart cannot "
         "follow it to rewrite it" +
             separateCompilation(*Result.Context) + ")",
         RewriteContext::placeOf(SM, Dispatch->getBeginLoc()),
         {}});
    return;
  }
  const auto *Caller = Result.Nodes.getNodeAs<FunctionDecl>("caller");
  const FunctionDecl *Callee = Result.Nodes.getNodeAs<FunctionDecl>("callee");
  const Expr *Call = Result.Nodes.getNodeAs<Expr>("call");
  SourceLocation At = Call ? Call->getBeginLoc() : SourceLocation();
  if (const auto *Named = Result.Nodes.getNodeAs<DeclRefExpr>("named")) {
    if (!Callee || !runsOnDevice(*Callee))
      return; // a host function named in a host branch
    At = Named->getLocation();
  }
  if (const auto *Local = Result.Nodes.getNodeAs<VarDecl>("local")) {
    // An array of objects destroys each of them.
    const CXXRecordDecl *R =
        Local->getType()->getBaseElementTypeUnsafe()->getAsCXXRecordDecl();
    Callee = R && R->hasDefinition() ? R->getDestructor() : nullptr;
    At = Local->getLocation();
  } else if (const auto *Temp =
                 Result.Nodes.getNodeAs<CXXBindTemporaryExpr>("temporary")) {
    Callee = Temp->getTemporary()->getDestructor();
    At = Temp->getBeginLoc();
  }
  if (!Caller || !Callee || Callee->isTrivial() ||
      !Ctx.isRewritable(SM, Caller->getLocation()))
    return;
  if (Call && isInstantiation(*Callee) && runsOnDevice(*Caller) &&
      checkedForDispatch(*Caller))
    if (const Expr *Arg = passedFunctionPointer(*Call);
        Arg && Ctx.isRewritable(SM, Arg->getBeginLoc())) {
      if (const auto Targets = Dispatched.ofPointer(
              Arg->IgnoreParenImpCasts()->getType(), *Result.Context))
        for (const FunctionDecl *Target : *Targets)
          follow(SM, *Caller, *Target, Arg->getBeginLoc(), nullptr, true);
      else
        Ctx.functionFacts(SM, Caller)
            .Hazards.insert(
                {"passes a function pointer to '" +
                     RewriteContext::patternOf(Callee)
                         ->getQualifiedNameAsString() +
                     "', a template that may call through it, whose target "
                     "may read the physical blockIdx/gridDim (smpart cannot "
                     "follow it to rewrite it" +
                     separateCompilation(*Result.Context) + ")",
                 RewriteContext::placeOf(SM, Arg->getBeginLoc()),
                 {}});
    }
  follow(SM, *Caller, *Callee, At, Call,
         Result.Context->getLangOpts().CUDAIsDevice);
}

std::string DeviceBlockIdRewrite::separateCompilation(const ASTContext &AST) {
  return AST.getLangOpts().GPURelocatableDeviceCode
             ? "; with separate compilation (-rdc) it may be in another "
               "translation unit"
             : "";
}

void DeviceBlockIdRewrite::followDestruction(const SourceManager &SM,
                                             const FunctionDecl &Caller,
                                             const CXXRecordDecl &Static,
                                             SourceLocation At,
                                             const ASTContext &AST,
                                             llvm::StringRef Verb) {
  const auto Classes = Dispatched.destroyedAs(Static, AST);
  if (!Classes) {
    Ctx.functionFacts(SM, &Caller)
        .Hazards.insert(
            {Verb.str() +
                 " an object through a virtual destructor, whose override "
                 "may read the physical blockIdx/gridDim (smpart cannot "
                 "follow it to rewrite it" +
                 separateCompilation(AST) + ")",
             RewriteContext::placeOf(SM, At),
             {}});
    return;
  }
  for (const CXXRecordDecl *Class : *Classes) {
    // A virtual destructor deallocates with the object's class's own
    // operator delete, if it has one.
    for (const NamedDecl *D :
         Class->lookup(AST.DeclarationNames.getCXXOperatorName(OO_Delete)))
      if (const auto *Op = dyn_cast<FunctionDecl>(D->getUnderlyingDecl()))
        follow(SM, Caller, *Op, At, nullptr, true);
    // A destructor not declared yet is implicit: it runs its parts'.
    if (const CXXDestructorDecl *Dtor = Class->getDestructor()) {
      if (!Dtor->isTrivial())
        follow(SM, Caller, *Dtor, At, nullptr, true);
      continue;
    }
    for (const CXXDestructorDecl *Part : partDestructors(*Class))
      follow(SM, Caller, *Part, At, nullptr, true);
  }
}

void DeviceBlockIdRewrite::follow(const SourceManager &SM,
                                  const FunctionDecl &Caller,
                                  const FunctionDecl &Callee, SourceLocation At,
                                  const Expr *Call, bool DeviceSide) {
  if (const auto *Dtor = dyn_cast<CXXDestructorDecl>(&Callee))
    for (const CXXDestructorDecl *Part : partDestructors(*Dtor->getParent()))
      follow(SM, Caller, *Part, At, nullptr, DeviceSide);
  const FunctionDecl *Target = RewriteContext::patternOf(&Callee);
  if (Target->hasBody() && Ctx.isRewritable(SM, Target->getLocation())) {
    FunctionFacts &CalleeFacts = Ctx.functionFacts(SM, Target);
    Ctx.functionFacts(SM, &Caller).Callees.insert(CalleeFacts.Key);
    return;
  }
  // The toolkit's grid queries (cooperative groups) are KernelHazards'.
  if (const auto *Direct = dyn_cast_or_null<CallExpr>(Call))
    if (!KernelHazards::gridDependentCall(*Direct).empty())
      return;
  if (runsOnDevice(Caller) && runsOnDevice(Callee))
    callsUnrewritten(SM, Caller, Callee, At, Call, DeviceSide);
}

void DeviceBlockIdRewrite::callsUnrewritten(const SourceManager &SM,
                                            const FunctionDecl &Caller,
                                            const FunctionDecl &Callee,
                                            SourceLocation At, const Expr *Call,
                                            bool DeviceSide) {
  if (OpaqueBlockIdReads::isRuntimeFunction(Callee) &&
      !OpaqueBlockIdReads::isLogicalBlockQuery(Callee))
    return;
  OpaqueBlockIdReads::Read R = Reads.of(&Callee);
  // Its default arguments are evaluated here, with its file's text.
  for (const Stmt *Arg :
       Call ? Call->children() : Stmt::const_child_range(nullptr, nullptr))
    if (const auto *Default = dyn_cast_or_null<CXXDefaultArgExpr>(Arg);
        Default && (R.What == OpaqueBlockIdReads::Kind::None ||
                    R.What == OpaqueBlockIdReads::Kind::Logical))
      if (const OpaqueBlockIdReads::Read D =
              Reads.ofExpr(Default->getExpr(), Callee);
          D.What != OpaqueBlockIdReads::Kind::None)
        R = D;
  if (R.What == OpaqueBlockIdReads::Kind::Logical) {
    Ctx.functionFacts(SM, &Caller).ReadsLogicalBlockOpaquely = true;
    return;
  }
  const FunctionDecl &Shown = *RewriteContext::patternOf(&Callee);
  const std::string Name = Shown.getQualifiedNameAsString();
  if (R.What == OpaqueBlockIdReads::Kind::Physical ||
      R.What == OpaqueBlockIdReads::Kind::Dispatched) {
    // Where the callee is says what would rewrite it (a functor of this
    // file that a toolkit template calls back is not reached either).
    const bool System =
        SM.isInSystemHeader(SM.getSpellingLoc(Shown.getLocation()));
    const std::string Reader = R.Reader->getQualifiedNameAsString();
    Ctx.functionFacts(SM, &Caller)
        .Hazards.insert({"calls '" + Name + "' (not rewritten: " +
                             (System ? "a system header"
                                     : "its file is outside --header-filter") +
                             (R.What == OpaqueBlockIdReads::Kind::Physical
                                  ? "), which reads the physical "
                                    "blockIdx/gridDim"
                                  : "), which calls through a function "
                                    "pointer or a virtual function that may "
                                    "read the physical blockIdx/gridDim"),
                         RewriteContext::placeOf(SM, At),
                         {{RewriteContext::placeOf(SM, R.Where),
                           "'" + Reader +
                               (R.What == OpaqueBlockIdReads::Kind::Physical
                                    ? "' reads it here"
                                    : "' makes that call here")}}});
    return;
  }
  // Defined in no file this parse sees: another translation unit
  // (separate compilation), which may read the block index. The device
  // side sees every definition of device code (the host side misses
  // those under #ifdef __CUDA_ARCH__); a pure virtual function has none.
  if (!DeviceSide || Callee.isDefined() || Callee.getBuiltinID() ||
      Callee.isPureVirtual() || Callee.isImplicit() || Callee.isDefaulted() ||
      SM.isInSystemHeader(SM.getSpellingLoc(Shown.getLocation())))
    return;
  Ctx.functionFacts(SM, &Caller)
      .UnseenCallees.try_emplace(Name, RewriteContext::placeOf(SM, At));
}

} // namespace smpart
