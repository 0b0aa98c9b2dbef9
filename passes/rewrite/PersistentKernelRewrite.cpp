#include "rewrite/PersistentKernelRewrite.h"

#include "analysis/BarrierHazard.h"
#include "rewrite/LaunchBoundsEdit.h"
#include "rewrite/OriginalKernel.h"
#include "rewrite/TemplateArgSpelling.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/Mangle.h"
#include "clang/AST/QualTypeNames.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/xxhash.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace smpart {

static constexpr llvm::StringLiteral ControlParam =
    "smpart::LaunchControl smpart_ctl";

void PersistentKernelRewrite::registerMatchers(MatchFinder &Finder) {
  auto Kernel = functionDecl(hasAttr(attr::CUDAGlobal), isDefinition());
  Finder.addMatcher(Kernel.bind("kernel"), this);
  // Returns and blockIdx/gridDim uses that belong to the kernel itself, not
  // to a lambda or local class inside it.
  Finder.addMatcher(
      returnStmt(forFunction(Kernel.bind("kernel"))).bind("return"), this);
  Finder.addMatcher(
      declRefExpr(to(varDecl(hasAnyName("::blockIdx", "::gridDim"))),
                  forFunction(Kernel.bind("kernel")))
          .bind("blockid"),
      this);
  // The names the rewrite declares in the kernel: a parameter or local of
  // the same name would clash with them or hide them.
  Finder.addMatcher(varDecl(hasAnyName("smpart_ctl", "smpart_cta"),
                            hasAncestor(Kernel.bind("kernel")))
                        .bind("reserved"),
                    this);
}

void PersistentKernelRewrite::run(const MatchFinder::MatchResult &Result) {
  const auto *Kernel = Result.Nodes.getNodeAs<FunctionDecl>("kernel");
  const SourceManager &SM = *Result.SourceManager;
  if (!Kernel || !Ctx.isRewritable(SM, Kernel->getLocation()) ||
      RewriteContext::isGeneratedKernel(*Kernel))
    return;
  if (const auto *Return = Result.Nodes.getNodeAs<ReturnStmt>("return"))
    return recordReturn(*Return, *Kernel, SM);
  if (const auto *Ref = Result.Nodes.getNodeAs<DeclRefExpr>("blockid"))
    return recordBlockIdUse(*Ref, *Kernel, SM);
  if (const auto *Var = Result.Nodes.getNodeAs<VarDecl>("reserved")) {
    Ctx.functionFacts(SM, Kernel)
        .Hazards.insert({"declares '" + Var->getNameAsString() +
                             "', a name the rewritten kernel uses for its own",
                         RewriteContext::placeOf(SM, Var->getLocation()),
                         {}});
    return;
  }
  recordKernel(*Kernel, Result);
}

void PersistentKernelRewrite::recordReturn(const ReturnStmt &Return,
                                           const FunctionDecl &Kernel,
                                           const SourceManager &SM) {
  FunctionFacts &F = Ctx.functionFacts(SM, &Kernel);
  F.Body.HasReturn = true;
  if (Return.getRetValue()) {
    F.Hazards.insert({"`return` with an operand in a kernel",
                      RewriteContext::placeOf(SM, Return.getBeginLoc()),
                      {}});
    return;
  }
  // `return` -> `goto smpart_next_block`: ends this logical block only.
  std::optional<Edit> E = RewriteContext::replace(
      SM, Return.getBeginLoc(), Return.getBeginLoc().getLocWithOffset(6),
      "goto smpart_next_block");
  if (!E) {
    F.Hazards.insert({"early `return` spelled inside a macro",
                      RewriteContext::placeOf(SM, Return.getBeginLoc()),
                      {}});
    return;
  }
  F.Edits.insert(*E);
}

void PersistentKernelRewrite::recordBlockIdUse(const DeclRefExpr &Ref,
                                               const FunctionDecl &Kernel,
                                               const SourceManager &SM) {
  FunctionFacts &F = Ctx.functionFacts(SM, &Kernel);
  if (Ref.getDecl()->getName() == "blockIdx")
    F.Body.UsesBlockIdx = true;
  else
    F.Body.UsesGridDim = true;
}

/// Inserts the control parameter into one declaration's parameter list.
static std::optional<Edit> addControlParam(const FunctionDecl &D,
                                           const SourceManager &SM) {
  FunctionTypeLoc FTL = D.getFunctionTypeLoc();
  if (!FTL)
    return std::nullopt;
  SourceLocation AfterParen = FTL.getLParenLoc().getLocWithOffset(1);
  if (D.getNumParams() > 0)
    return RewriteContext::insert(SM, AfterParen, (ControlParam + ", ").str());
  // `()` or `(void)`: the control block becomes the only parameter.
  return RewriteContext::replace(SM, AfterParen, FTL.getRParenLoc(),
                                 ControlParam);
}

/// Inserts the control parameter into an explicit instantiation
/// (`template __global__ void k<int>(int *);`), whose written parameter list
/// the AST does not keep: lex from the name past `<...>` to the `(`.
static std::optional<Edit>
addControlParamToInstantiation(const FunctionDecl &Specialization,
                               const SourceManager &SM, const LangOptions &LO) {
  SourceLocation Loc = Specialization.getPointOfInstantiation();
  if (Loc.isInvalid() || Loc.isMacroID())
    return std::nullopt;
  std::optional<Token> Tok = Lexer::findNextToken(Loc, SM, LO);
  if (Tok && Tok->is(tok::less)) {
    int Depth = 0;
    for (; Tok; Tok = Lexer::findNextToken(Tok->getLocation(), SM, LO)) {
      if (Tok->is(tok::less))
        ++Depth;
      else if (Tok->is(tok::greater))
        --Depth;
      else if (Tok->is(tok::greatergreater))
        Depth -= 2;
      if (Depth <= 0)
        break;
    }
    if (Tok)
      Tok = Lexer::findNextToken(Tok->getLocation(), SM, LO);
  }
  if (!Tok || Tok->isNot(tok::l_paren) || Tok->getLocation().isMacroID())
    return std::nullopt;
  SourceLocation AfterParen = Tok->getLocation().getLocWithOffset(1);
  if (Specialization.getNumParams() > 0)
    return RewriteContext::insert(SM, AfterParen, (ControlParam + ", ").str());
  std::optional<Token> Next = Lexer::findNextToken(Tok->getLocation(), SM, LO);
  if (Next && Next->is(tok::raw_identifier) &&
      Next->getRawIdentifier() == "void")
    Next = Lexer::findNextToken(Next->getLocation(), SM, LO);
  if (!Next || Next->isNot(tok::r_paren))
    return std::nullopt;
  return RewriteContext::replace(SM, AfterParen, Next->getLocation(),
                                 ControlParam);
}

/// The facts the manifest reports: parameters as written, and the device
/// symbol (not the host-side launch stub).
static void recordSignature(const FunctionDecl &Kernel, ASTContext &AST,
                            FunctionFacts &F) {
  if (F.Params.empty())
    for (const ParmVarDecl *P : Kernel.parameters())
      F.Params.push_back(
          (P->getType().getAsString(AST.getPrintingPolicy()) +
           (P->getName().empty() ? "" : " " + P->getName().str())));
  if (F.MangledName.empty() && !Kernel.isDependentContext()) {
    std::unique_ptr<MangleContext> Mangler(AST.createMangleContext());
    llvm::raw_string_ostream OS(F.MangledName);
    Mangler->mangleName(GlobalDecl(&Kernel, KernelReferenceKind::Kernel), OS);
  }
}

/// __launch_bounds__ as per-block resource hints.
static void recordResourceHints(const FunctionDecl &Kernel, ASTContext &AST,
                                FunctionFacts &F) {
  const auto *LB = Kernel.getAttr<CUDALaunchBoundsAttr>();
  if (!LB)
    return;
  if (auto V = LB->getMaxThreads()->getIntegerConstantExpr(AST))
    F.ResourceHints["max_threads_per_block"] = llvm::toString(*V, 10);
  if (LB->getMinBlocks())
    if (auto V = LB->getMinBlocks()->getIntegerConstantExpr(AST))
      F.ResourceHints["min_blocks_per_sm"] = llvm::toString(*V, 10);
}

static FileID fileOfDecl(const FunctionDecl &D, const SourceManager &SM) {
  return SM.getFileID(SM.getExpansionLoc(D.getLocation()));
}

/// An extern "C" kernel's symbol does not encode its parameters: another
/// file that declares it itself, or a driver-API load by name
/// (cuModuleGetFunction), would launch the persistent form with the
/// original argument list and link without complaint.
static void refuseExternC(const FunctionDecl &Kernel, const SourceManager &SM,
                          FunctionFacts &F) {
  if (!Kernel.isExternC() ||
      llvm::any_of(Kernel.redecls(), [&](const FunctionDecl *D) {
        return fileOfDecl(*D, SM) != fileOfDecl(Kernel, SM);
      }))
    return;
  F.Hazards.insert({"extern \"C\" kernel: its symbol does not encode the "
                    "parameter list, so a launch from another file (or by "
                    "name through the driver API) would pass the original "
                    "arguments to the rewritten kernel",
                    F.Where,
                    {}});
}

/// A declaration in another file (a shared header, rewritten or not) is
/// what other translation units launch through: it stays as it is, and the
/// original definition must be kept beside the rewritten overload, which
/// some kernels cannot have.
void PersistentKernelRewrite::keepForeignDeclaration(const FunctionDecl &Kernel,
                                                     const FunctionDecl &D,
                                                     const SourceManager &SM,
                                                     FunctionFacts &F) {
  const Place Declared = RewriteContext::placeOf(SM, D.getLocation());
  if (Kernel.isExternC())
    F.Hazards.insert({"also declared in '" + Declared.File +
                          "', which other files launch it through, and an "
                          "extern \"C\" kernel cannot keep its original "
                          "signature beside the rewritten one",
                      F.Where,
                      {{Declared, "declared here"}}});
  else if (llvm::any_of(D.parameters(), [](const ParmVarDecl *P) {
             return P->hasDefaultArg();
           }))
    F.Hazards.insert({"also declared in '" + Declared.File +
                          "' with default arguments, which the "
                          "rewritten overload beside the original "
                          "would not have",
                      F.Where,
                      {{Declared, "declared here"}}});
  else
    F.NeedsOriginal = true;
}

/// Every declaration in the kernel's own file gets the control parameter,
/// so that all of them still declare the same function; each also gets a
/// copy of itself, used if the original is kept, so that code between a
/// declaration and the definition can still name the original. Their
/// __launch_bounds__ may become a cap without padding (LaunchBoundsEdit.h).
void PersistentKernelRewrite::rewriteDeclarations(const FunctionDecl &Kernel,
                                                  ASTContext &AST,
                                                  FunctionFacts &F) {
  const SourceManager &SM = AST.getSourceManager();
  const LangOptions &LO = AST.getLangOpts();
  // Only where no other file can launch the rewritten kernel: a header's
  // kernel is rewritten for every file that includes it, whose queries of
  // its largest block this run does not see.
  if (SM.isInMainFile(SM.getExpansionLoc(Kernel.getLocation())))
    F.LaunchBoundsEdits = launchBoundsEdits(Kernel, AST);
  for (const FunctionDecl *D : Kernel.redecls()) {
    if (!Ctx.isRewritable(SM, D->getLocation()) ||
        fileOfDecl(*D, SM) != fileOfDecl(Kernel, SM)) {
      keepForeignDeclaration(Kernel, *D, SM, F);
      continue;
    }
    if (std::optional<Edit> E = addControlParam(*D, SM))
      F.Edits.insert(*E);
    else
      F.Hazards.insert({"parameter list spelled inside a macro",
                        RewriteContext::placeOf(SM, D->getLocation()),
                        {}});
    if (D == &Kernel)
      continue;
    if (std::optional<Edit> Copy = copyOfDeclaration(*D, SM, LO))
      F.OriginalEdits.insert(*Copy);
    else
      F.OriginalUncopyable = true;
  }
}

/// Explicit instantiations name the old parameter list too. The original
/// template is then kept only where other files need it: its explicit
/// instantiations are not copied.
void PersistentKernelRewrite::rewriteExplicitInstantiations(
    const FunctionDecl &Kernel, const SourceManager &SM, const LangOptions &LO,
    FunctionFacts &F) {
  const FunctionTemplateDecl *Template = Kernel.getDescribedFunctionTemplate();
  if (!Template)
    return;
  for (const FunctionDecl *Spec : Template->specializations()) {
    TemplateSpecializationKind TSK = Spec->getTemplateSpecializationKind();
    if (TSK != TSK_ExplicitInstantiationDeclaration &&
        TSK != TSK_ExplicitInstantiationDefinition)
      continue;
    if (!Ctx.isRewritable(SM, Spec->getPointOfInstantiation()))
      continue;
    F.OriginalUncopyable = true;
    if (std::optional<Edit> E = addControlParamToInstantiation(*Spec, SM, LO))
      F.Edits.insert(*E);
    else
      F.Hazards.insert(
          {"explicit instantiation cannot be rewritten",
           RewriteContext::placeOf(SM, Spec->getPointOfInstantiation()),
           {}});
  }
}

/// The original definition beside the rewritten overload: required for a
/// kernel other files launch (declared elsewhere, or defined in a header,
/// which every file including it launches: after this run the header is
/// rewritten for all of them, and a file the tool has not seen still
/// launches the original signature) and for one whose address launches it
/// unchanged (KernelAddressRewrite; the planner decides, once every use is
/// seen); otherwise as --keep-original asks. So it is copied whenever it
/// can be, and kept as the planner decides.
void PersistentKernelRewrite::keepOriginal(const FunctionDecl &Kernel,
                                           const CompoundStmt &Body,
                                           const SourceManager &SM,
                                           FunctionFacts &F) {
  if (!SM.isInMainFile(SM.getExpansionLoc(Kernel.getLocation())) &&
      !Kernel.isExternC())
    F.NeedsOriginal = true;
  // `template <class... Ts> k(Ts...)`: the original with Ts = {LaunchControl}
  // and the rewritten overload with Ts = {} have one signature, and nvcc's
  // host stubs for `k<>` are then ambiguous. The original is not kept by
  // choice, and a kernel that must keep it is refused.
  if (Kernel.getNumParams() > 0 && Kernel.getParamDecl(0)->isParameterPack()) {
    F.WantsOriginal = false;
    if (F.NeedsOriginal)
      F.Hazards.insert({"its parameter list starts with a parameter pack, and "
                        "the original it must keep for other files would have "
                        "the signature of the rewritten overload",
                        F.Where,
                        {}});
    return;
  }
  if (std::optional<Edit> Copy = copyOfDefinition(Kernel, Body, SM)) {
    F.OriginalEdits.insert(*Copy);
    return;
  }
  F.OriginalUncopyable = true;
  if (F.NeedsOriginal)
    F.Hazards.insert({"declared in a file that is not rewritten, and its "
                      "definition cannot be copied",
                      F.Where,
                      {}});
}

/// Registration for the runtime's preload (lazy module loading: see
/// runtime/include/smpart/detail/preload.hpp), at the end of the file and
/// at global scope, so that no line of the user's code moves. Only for
/// kernels that global scope can name: not class members (access), and of
/// a template, every instance the file makes whose arguments global scope
/// can spell (spellTemplateArgs; an instance loaded at its own first launch
/// could wait behind a preempted kernel). The tool parses without
/// __NVCC__: an instance made only in code hidden from nvcc is registered
/// too (runtime/README.md says so). Named relative to the enclosing scope, not
/// with a leading `::`, so that a file included inside a namespace (as the GPU
/// suite does) still compiles.
static void registerForPreload(const FunctionDecl &Kernel,
                               const SourceManager &SM, ASTContext &AST,
                               FunctionFacts &F) {
  if (!Kernel.getDeclContext()->getRedeclContext()->isFileContext() ||
      !SM.isInMainFile(SM.getExpansionLoc(Kernel.getLocation())))
    return;
  PrintingPolicy Policy = AST.getPrintingPolicy();
  Policy.SuppressUnwrittenScope = true;
  std::string Name;
  llvm::raw_string_ostream OS(Name);
  Kernel.printQualifiedName(OS, Policy);
  const FileID Main = SM.getMainFileID();
  const unsigned End = SM.getBufferData(Main).size();
  const std::string Var =
      "smpart_registered_" +
      std::to_string(SM.getSpellingLineNumber(Kernel.getLocation())) + "_" +
      Kernel.getNameAsString();
  auto Register = [&](const FunctionDecl &Fn, const std::string &Spelled,
                      const std::string &VarName) {
    std::string Type = "void (*)(smpart::LaunchControl";
    for (const ParmVarDecl *P : Fn.parameters())
      Type += ", " + TypeName::getFullyQualifiedName(P->getType(), AST, Policy);
    Type += ")";
    F.Edits.insert(Edit{
        RewriteContext::fileOf(SM, SM.getLocForStartOfFile(Main)), End, 0,
        "\n#if !defined(__CUDA_ARCH__) && !defined(SMPART_EMULATION)\n"
        "static const bool " +
            VarName +
            " = ::smpart::detail::registerKernel(reinterpret_cast<const void "
            "*>(static_cast<" +
            Type + ">(&" + Spelled + ")), \"" + Name + "\");\n#endif\n"});
  };
  const FunctionTemplateDecl *Template = Kernel.getDescribedFunctionTemplate();
  if (!Template) {
    Register(Kernel, Name, Var);
    return;
  }
  for (const FunctionDecl *Spec : Template->specializations()) {
    // Only instances whose definition the file instantiates: a declaration
    // made while resolving an overload may not compile as a definition.
    const TemplateSpecializationKind K = Spec->getTemplateSpecializationKind();
    const TemplateArgumentList *Args = Spec->getTemplateSpecializationArgs();
    if (!Args || !Spec->isDefined() ||
        (K != TSK_ImplicitInstantiation &&
         K != TSK_ExplicitInstantiationDefinition))
      continue;
    std::optional<std::string> Spelled =
        spellTemplateArgs(Args->asArray(), AST, SpellingScope::Global);
    if (!Spelled)
      continue;
    // Named by its arguments, not by its position: the host and device
    // parses may list different instances, and merge identical lines.
    const std::string Instance = Name + *Spelled;
    Register(*Spec, Instance,
             Var + "_" + llvm::utohexstr(llvm::xxh3_64bits(Instance)));
  }
}

/// Where the body is, for the prologue and epilogue the planner inserts.
static void recordBody(const CompoundStmt &Body, const SourceManager &SM,
                       KernelBody &B) {
  B.Valid = true;
  B.File = RewriteContext::fileOf(SM, Body.getLBracLoc());
  // Lines and file as diagnostics name them (as a #line in the input says).
  B.LineFile = RewriteContext::lineFileOf(SM, Body.getLBracLoc());
  B.OpenOffset = SM.getFileOffset(Body.getLBracLoc());
  B.OpenLine = SM.getPresumedLineNumber(Body.getLBracLoc());
  B.CloseOffset = SM.getFileOffset(Body.getRBracLoc());
  B.CloseLine = SM.getPresumedLineNumber(Body.getRBracLoc());
}

/// A barrier or warp collective reachable after an early return, with a
/// note that says how the barrier is reached.
static void refuseBarrierAfterReturn(const FunctionDecl &Kernel,
                                     ASTContext &AST, const SourceManager &SM,
                                     FunctionFacts &F,
                                     DispatchTargets &Targets) {
  std::optional<BarrierAfterReturn> Hazard =
      findBarrierAfterReturn(Kernel, AST, &Targets);
  if (!Hazard)
    return;
  Place Ret = RewriteContext::placeOf(SM, Hazard->Return->getBeginLoc());
  Place Bar = RewriteContext::placeOf(SM, Hazard->Barrier->getBeginLoc());
  const bool Warp = Hazard->Kind == Collective::Warp;
  const std::string What = Warp ? "warp collective" : "barrier";
  std::string Note = What + " here";
  const auto *Call = dyn_cast<CallExpr>(Hazard->Barrier);
  const auto *Method = dyn_cast_or_null<CXXMethodDecl>(Hazard->Via);
  if (Method && Method->isVirtual() && !Warp)
    Note = "virtual call of '" + Method->getQualifiedNameAsString() +
           "' here, which may synchronise the block (an override it may "
           "run does, or smpart cannot tell which it runs)";
  else if (Hazard->Via)
    Note = "call of '" + Hazard->Via->getQualifiedNameAsString() + "', which " +
           (Warp ? "runs a warp collective"
                 : "may synchronise the block (a barrier inside it, or "
                   "no body to look into)");
  else if (!Call)
    Note = "inline asm " + What + " here";
  else if (!isBlockBarrier(*Call) && !isWarpCollective(*Call))
    // Through a function pointer: a target DispatchTargets lists runs a
    // collective, or they cannot be listed (a possible barrier).
    Note = Warp ? "indirect call here, which may reach a function that runs "
                  "a warp collective"
                : "indirect call here, which may synchronise the block (a "
                  "function it may reach does, or smpart cannot tell which "
                  "it reaches)";
  F.Hazards.insert(
      {What + " at line " + std::to_string(Bar.Line) +
           " is reachable after the early return at line " +
           std::to_string(Ret.Line) +
           (Warp ? " (lanes that returned would not have exited, and the "
                   "collective would wait for them)"
                 : " (threads that returned would wait at a different "
                   "barrier)"),
       F.Where,
       {{Ret, "early return here"}, {Bar, Note}}});
}

void PersistentKernelRewrite::recordKernel(const FunctionDecl &Kernel,
                                           const MatchFinder::MatchResult &R) {
  const SourceManager &SM = *R.SourceManager;
  ASTContext &AST = *R.Context;
  // Instantiations share the pattern's text; the pattern is rewritten once.
  if (Kernel.isTemplateInstantiation())
    return;
  FunctionFacts &F = Ctx.functionFacts(SM, &Kernel);
  F.IsKernel = true;
  F.WantsOriginal = RewriteContext::wantsOriginal(Kernel, Ctx.keepOriginal());
  recordSignature(Kernel, AST, F);
  recordResourceHints(Kernel, AST, F);
  refuseExternC(Kernel, SM, F);
  rewriteDeclarations(Kernel, AST, F);
  rewriteExplicitInstantiations(Kernel, SM, AST.getLangOpts(), F);

  const auto *Body = dyn_cast_or_null<CompoundStmt>(Kernel.getBody());
  if (!Body || Body->getLBracLoc().isMacroID() ||
      Body->getRBracLoc().isMacroID()) {
    F.Hazards.insert({"kernel body spelled inside a macro", F.Where, {}});
    F.Body.Valid = true; // refused, in the manifest and with a warning
    return;
  }
  keepOriginal(Kernel, *Body, SM, F);
  registerForPreload(Kernel, SM, AST, F);
  recordBody(*Body, SM, F.Body);
  refuseBarrierAfterReturn(Kernel, AST, SM, F, Dispatched);
}

} // namespace smpart
