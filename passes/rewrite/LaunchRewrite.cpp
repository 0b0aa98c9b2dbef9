#include "rewrite/LaunchRewrite.h"
#include "rewrite/TemplateArgSpelling.h"

#include "analysis/DeviceCode.h"
#include "rewrite/ConfinedStreamEdit.h"
#include "rewrite/LaunchBoundsEdit.h"
#include "rewrite/LaunchSyntax.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/QualTypeNames.h"
#include "clang/AST/TemplateBase.h"
#include "clang/Basic/CharInfo.h"
#include "clang/Lex/Lexer.h"
#include "llvm/Support/raw_ostream.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace smpart {

void LaunchRewrite::registerMatchers(MatchFinder &Finder) {
  Finder.addMatcher(hostLaunch(), this);
}

/// `Callee` without the template argument list it ends with
/// (`ns::k<N>` -> `ns::k`), or "" when it does not end with one that can be
/// matched (a `>` inside parentheses is not a bracket).
static llvm::StringRef withoutTemplateArgs(llvm::StringRef Callee) {
  Callee = Callee.rtrim();
  if (!Callee.ends_with(">"))
    return "";
  int Angles = 0, Parens = 0;
  for (size_t I = Callee.size(); I-- > 0;) {
    const char C = Callee[I];
    if (C == ')')
      ++Parens;
    else if (C == '(')
      --Parens;
    else if (Parens == 0 && C == '>')
      ++Angles;
    else if (Parens == 0 && C == '<' && --Angles == 0)
      return Callee.take_front(I).rtrim();
  }
  return "";
}

std::string LaunchRewrite::kernelAddress(const CUDAKernelCallExpr &Call,
                                         llvm::StringRef CalleeText,
                                         const ASTContext &AST,
                                         bool BesideOriginal) {
  const auto *Ref =
      dyn_cast<DeclRefExpr>(Call.getCallee()->IgnoreParenImpCasts());
  const FunctionDecl *FD = Call.getDirectCallee();
  if (!Ref || !FD)
    return "nullptr";
  std::string Name = CalleeText.str();
  if (const TemplateArgumentList *Args = FD->getTemplateSpecializationArgs()) {
    // Some or all arguments deduced (`k<N><<<...>>>(x)`): spell them all,
    // so that the runtime knows the kernel (occupancy, shared memory
    // limit, preloading under lazy loading).
    // A pack may be written in part (`k<int, float>` for k<T, Ts...>
    // called with three arguments): respell whenever there is one.
    const bool HasPack =
        llvm::any_of(Args->asArray(), [](const TemplateArgument &A) {
          return A.getKind() == TemplateArgument::Pack;
        });
    const bool Partial = Ref->hasExplicitTemplateArgs() &&
                         (Ref->getNumTemplateArgs() != Args->size() || HasPack);
    if (Partial) {
      Name = withoutTemplateArgs(CalleeText).str();
      if (Name.empty())
        return "nullptr";
    }
    if (Partial || !Ref->hasExplicitTemplateArgs()) {
      // A lambda or an unnamed type has no spelling: no address then.
      std::optional<std::string> Spelled =
          spellTemplateArgs(Args->asArray(), AST, SpellingScope::Launch);
      if (!Spelled)
        return "nullptr";
      Name += *Spelled;
    }
    if (FD->getType()->isDependentType())
      return "nullptr";
  }
  // An overload set (the original kept beside the rewritten kernel is one):
  // name the one this call resolved to, rewritten.
  if (Ref->hadMultipleCandidates() || BesideOriginal)
    return "reinterpret_cast<const void *>(" +
           RewriteContext::rewrittenOverload(*FD, Name, AST) + ")";
  return "reinterpret_cast<const void *>(&" + Name + ")";
}

/// True if an argument only becomes the parameter's type at the call: a
/// braced list (`k<<<g, b>>>({1, 2})`), or a converting constructor or
/// conversion operator. std::make_tuple cannot take the first, and would run
/// the second again at every relaunch.
static bool convertsAtCall(const Expr *Arg) {
  const Expr *E = Arg;
  for (bool Changed = true; Changed;) {
    Changed = false;
    if (const auto *EWC = dyn_cast<ExprWithCleanups>(E))
      E = EWC->getSubExpr(), Changed = true;
    if (const auto *MTE = dyn_cast<MaterializeTemporaryExpr>(E))
      E = MTE->getSubExpr(), Changed = true;
    if (const auto *BT = dyn_cast<CXXBindTemporaryExpr>(E))
      E = BT->getSubExpr(), Changed = true;
  }
  if (isa<InitListExpr>(E))
    return true;
  if (const auto *Cast = dyn_cast<ImplicitCastExpr>(E))
    return Cast->getCastKind() == CK_ConstructorConversion ||
           Cast->getCastKind() == CK_UserDefinedConversion;
  if (const auto *Construct = dyn_cast<CXXConstructExpr>(E))
    return !isa<CXXTemporaryObjectExpr>(Construct) &&
           (Construct->isListInitialization() ||
            (Construct->getNumArgs() >= 1 &&
             !Construct->getConstructor()->isCopyOrMoveConstructor()));
  return false;
}

/// `std::tuple<P1, ..., Pk>(` for the parameters of the written arguments,
/// when some argument converts at the call (see convertsAtCall) and every
/// type can be spelled at the launch; otherwise empty.
static std::string convertingCapture(const CUDAKernelCallExpr &Call,
                                     const ASTContext &AST) {
  const FunctionDecl *Kernel = Call.getDirectCallee();
  if (!Kernel || Call.isInstantiationDependent())
    return {};
  std::vector<QualType> Types;
  bool Needed = false;
  for (unsigned I = 0; I < Call.getNumArgs(); ++I) {
    const Expr *Arg = Call.getArg(I);
    if (isa<CXXDefaultArgExpr>(Arg))
      break;
    if (I >= Kernel->getNumParams())
      return {};
    QualType T = Kernel->getParamDecl(I)->getType().getNonReferenceType();
    if (T->isDependentType())
      return {};
    if (const TagDecl *Tag = T->getAsTagDecl())
      if ((!Tag->getIdentifier() && !Tag->getTypedefNameForAnonDecl()) ||
          Tag->isInAnonymousNamespace() || Tag->getParentFunctionOrMethod())
        return {};
    Needed |= convertsAtCall(Arg);
    Types.push_back(T.getUnqualifiedType());
  }
  if (!Needed)
    return {};
  PrintingPolicy Policy = AST.getPrintingPolicy();
  Policy.SuppressUnwrittenScope = true;
  std::string Out = "std::tuple<";
  for (size_t I = 0; I < Types.size(); ++I)
    Out += (I ? ", " : "") +
           TypeName::getFullyQualifiedName(Types[I], AST, Policy);
  return Out + ">(";
}

void LaunchRewrite::run(const MatchFinder::MatchResult &Result) {
  const auto *Call = Result.Nodes.getNodeAs<CUDAKernelCallExpr>("launch");
  const SourceManager &SM = *Result.SourceManager;
  const FunctionDecl *Kernel = Call ? launchedKernel(*Call) : nullptr;
  if (!Kernel || !Kernel->hasAttr<CUDAGlobalAttr>() ||
      RewriteContext::isGeneratedKernel(*Kernel))
    return;
  // A host lambda is __host__ __device__ to clang (DeviceCode.h); the device
  // parse types its launch as a device-side one. The host parse rewrites it.
  const auto *Fn = Result.Nodes.getNodeAs<FunctionDecl>("fn");
  if (Result.Context->getLangOpts().CUDAIsDevice && Fn &&
      Fn->hasAttr<CUDADeviceAttr>())
    return;
  const FunctionDecl *Pattern = RewriteContext::patternOf(Kernel);
  // Kernels defined elsewhere keep their signature: leave the launch alone.
  if (!Pattern->hasBody() || !Ctx.isRewritable(SM, Pattern->getLocation()))
    return;
  LaunchFacts L;
  L.KernelKey = Ctx.functionFacts(SM, Pattern).Key;
  L.Where = RewriteContext::placeOf(SM, Call->getBeginLoc());
  std::optional<LaunchSyntax> S =
      parseLaunch(*Call, SM, Result.Context->getLangOpts());
  if (!S || !Ctx.isRewritable(SM, S->CalleeBegin)) {
    Ctx.functionFacts(SM, Pattern)
        .Hazards.insert({"launch at line " + std::to_string(L.Where.Line) +
                             " is spelled across macros or files and cannot "
                             "be rewritten",
                         L.Where,
                         {}});
    Ctx.facts().Launches.push_back(std::move(L)); // cannot be confined
    return;
  }
  L.MacroName = S->MacroName;

  // The kernel's name for profiles, plans and traces, as a C++ expression.
  // In a macro body one spelling serves every expansion: where the callee
  // is a macro parameter, `#k` names each expansion's kernel as its
  // argument is written (two kernels launched through one macro must not
  // share a name); else the name says which macro it is in.
  const bool CalleeIsParameter =
      !S->MacroName.empty() && isValidAsciiIdentifier(S->CalleeText) &&
      SM.isMacroArgExpansion(Call->getCallee()->getBeginLoc());
  const std::string Name =
      S->MacroName.empty() ? "\"" + Pattern->getQualifiedNameAsString() + "\""
      : CalleeIsParameter
          ? "#" + S->CalleeText
          : "\"" + S->CalleeText + " in macro " + S->MacroName + "\"";
  // In a macro body one spelling serves every expansion: do not commit to
  // one expansion's overload or template arguments.
  // Whether the original is kept is the planner's decision, made once
  // every use of the kernel is seen: one spelling for each outcome.
  auto Address = [&](bool BesideOriginal) -> std::string {
    return S->MacroName.empty() ? kernelAddress(*Call, S->CalleeText,
                                                *Result.Context, BesideOriginal)
                                : "nullptr";
  };
  std::string MissingConfig;
  for (unsigned I = S->WrittenConfigArgs; I < 4; ++I)
    MissingConfig += ", 0";

  auto AddTo = [&](std::set<Edit> &To, SourceLocation B, SourceLocation E,
                   std::string Text) {
    if (std::optional<Edit> Ed =
            RewriteContext::replace(SM, B, E, Text, /*AllowMacro=*/true))
      To.insert(*Ed);
  };
  auto Add = [&](SourceLocation B, SourceLocation E, std::string Text) {
    AddTo(L.Edits, B, E, std::move(Text));
  };
  // launchRewritten returns nothing, as `<<<>>>`: `return k<<<...>>>(...);`
  // in a void function still compiles. With the original kept, the closure
  // can launch it too (SMPART_DISABLE, KernelInfo::has_original); a launch
  // in a macro body serves kernels that may differ in that, and never does.
  // A kernel whose rewritten __launch_bounds__ may allow larger blocks
  // than the original's (LaunchBoundsEdit.h; the planner decides) carries
  // the original's limit, which CUDA enforces anyway where it does not.
  std::optional<unsigned> MaxThreads;
  if (S->MacroName.empty() && !Call->isInstantiationDependent())
    MaxThreads = originalMaxThreads(*Kernel, *Result.Context);
  auto Tail = [&](bool BesideOriginal) -> std::string {
    if (MaxThreads)
      return (BesideOriginal ? ", true, " : ", false, ") +
             std::to_string(*MaxThreads) + "}, ";
    return BesideOriginal && S->MacroName.empty() ? ", true}, " : "}, ";
  };
  const std::string Info = "smpart::launchRewritten({" + Name + ", ";
  AddTo(L.WithoutOriginal, S->CalleeBegin, S->ConfigOpen.getLocWithOffset(3),
        Info + Address(false) + Tail(false));
  AddTo(L.WithOriginal, S->CalleeBegin, S->ConfigOpen.getLocWithOffset(3),
        Info + Address(true) + Tail(true));
  // A null pointer constant (NULL, 0) would be captured as an integer and
  // no longer convert to the pointer parameter: capture nullptr instead.
  if (const FunctionDecl *Direct = Call->getDirectCallee())
    for (unsigned I = 0; I < Call->getNumArgs() && I < Direct->getNumParams();
         ++I) {
      const Expr *Arg = Call->getArg(I);
      const QualType Param = Direct->getParamDecl(I)->getType();
      if (isa<CXXDefaultArgExpr>(Arg) ||
          !(Param->isPointerType() || Param->isMemberPointerType()) ||
          isa<CXXNullPtrLiteralExpr>(Arg->IgnoreParenImpCasts()) ||
          Arg->isNullPointerConstant(*Result.Context,
                                     Expr::NPC_ValueDependentIsNotNull) ==
              Expr::NPCK_NotNull)
        continue;
      CharSourceRange R = Lexer::makeFileCharRange(
          CharSourceRange::getTokenRange(Arg->getSourceRange()), SM,
          Result.Context->getLangOpts());
      if (R.isValid())
        Add(R.getBegin(), R.getEnd(), "nullptr");
    }
  // Arguments are captured as std::make_tuple decays them, unless one only
  // becomes its parameter's type at the call: then each is captured
  // converted to its parameter's type, once, as the original launch does.
  std::string Capture = S->MacroName.empty()
                            ? convertingCapture(*Call, *Result.Context)
                            : std::string();
  if (Capture.empty())
    Capture = "std::make_tuple(";
  Add(S->ConfigClose, S->ArgsOpen.getLocWithOffset(1),
      MissingConfig + ", [smpart_args = " + Capture);
  const std::string Config =
      "<<<smpart_p.grid, smpart_p.block, smpart_p.smem, smpart_p.stream>>>";
  const std::string Rewritten =
      S->CalleeText + Config + "(smpart_p.ctl, smpart_a...);";
  const std::string Open = ")](const smpart::LaunchParams &smpart_p) { "
                           "std::apply([&](const auto &...smpart_a) { ";
  const std::string Close = " }, smpart_args); })";
  AddTo(L.WithoutOriginal, S->ArgsClose, S->ArgsClose.getLocWithOffset(1),
        Open + Rewritten + Close);
  AddTo(L.WithOriginal, S->ArgsClose, S->ArgsClose.getLocWithOffset(1),
        S->MacroName.empty()
            ? Open + "if (smpart_p.original) " + S->CalleeText + Config +
                  "(smpart_a...); else " + Rewritten + Close
            : Open + Rewritten + Close);
  if (S->MacroName.empty())
    L.Confined =
        confinedStreamEdits(*Call, *S, "\"" + partitionName(*Pattern) + "\"",
                            SM, Result.Context->getLangOpts());
  Ctx.facts().Launches.push_back(std::move(L));
}

} // namespace smpart
