#include "pipeline/TransformPlanner.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <optional>

namespace smpart {

std::string TransformPlanner::lineDirective(unsigned Line,
                                            const std::string &File) {
  std::string Escaped;
  for (char C : File) {
    if (C == '\\' || C == '"')
      Escaped += '\\';
    Escaped += C;
  }
  return "#line " + std::to_string(Line) + " \"" + Escaped + "\"\n";
}

std::string TransformPlanner::prologue(const KernelBody &Body,
                                       bool PublishBlockIdx) {
  // A kernel whose device functions read smpart::blockIdx() needs the
  // logical block published in shared memory at every block (a second
  // barrier); the others do without.
  std::string S = "\n  // smpart: this CTA runs logical blocks until the grid "
                  "is done or it must yield\n"
                  "  for (smpart::detail::";
  S += PublishBlockIdx ? "PublishingCta" : "Cta";
  S += " smpart_cta(smpart_ctl); smpart_cta.next();) {\n";
  if (Body.UsesBlockIdx)
    S += "    const uint3 blockIdx = smpart_cta.blockIdx();\n";
  if (Body.UsesGridDim)
    S += "    const dim3 gridDim = smpart_cta.gridDim();\n";
  S += "    {\n";
  S += lineDirective(Body.OpenLine, Body.LineFile);
  return S;
}

std::string TransformPlanner::epilogue(const KernelBody &Body) {
  std::string S = "\n    }";
  if (Body.HasReturn)
    S += " smpart_next_block:;";
  S += "\n  }\n";
  S += lineDirective(Body.CloseLine, Body.LineFile);
  return S;
}

/// \p Text with the bypass tag's expression made the constant \p Tag.
static std::string withTag(std::string Text, bool Tag) {
  const llvm::StringRef Expr = BypassTagExpr;
  const char *Value = Tag ? "true" : "false";
  for (size_t At = Text.find(Expr); At != std::string::npos;
       At = Text.find(Expr, At))
    Text.replace(At, Expr.size(), Value);
  return Text;
}

void TransformPlanner::unswitch(const TagSwitchedText &L,
                                llvm::StringRef FileText,
                                std::set<Edit> &Edits) {
  if (L.Begin >= L.End || L.End > FileText.size())
    return;
  // Insertions at its bounds belong to what is around it.
  std::vector<Edit> Inside;
  for (const Edit &E : Edits) {
    if (E.File != L.File)
      continue;
    const unsigned EEnd = E.Offset + E.Length;
    if (E.Length == 0 ? E.Offset <= L.Begin || E.Offset >= L.End
                      : EEnd <= L.Begin || E.Offset >= L.End)
      continue;
    if (E.Offset < L.Begin || EEnd > L.End)
      return; // crosses its bounds
    Inside.push_back(E);
  }
  auto Copy = [&](bool Tag) -> std::optional<std::string> {
    std::string Out;
    unsigned At = L.Begin;
    for (const Edit &E : Inside) {
      if (E.Offset < At)
        return std::nullopt; // overlapping edits: let the pipeline say so
      Out += FileText.slice(At, E.Offset);
      Out += withTag(E.Text, Tag);
      At = E.Offset + E.Length;
    }
    Out += FileText.slice(At, L.End);
    return Out;
  };
  const std::optional<std::string> Bypassing = Copy(true);
  const std::optional<std::string> Caching = Copy(false);
  if (!Bypassing || !Caching)
    return;
  // The copies keep the text's lines and columns for diagnostics.
  const std::string Pad(L.Col - 1, ' ');
  const std::string At = lineDirective(L.Line, L.LineFile) + Pad;
  std::string Text = "{ // smpart: once per bypass tag, so that its loads' tag "
                     "is a constant\n";
  Text += Pad + "if (" + BypassTagExpr + ") {\n" + At + *Bypassing + "\n" +
          Pad + "} else {\n" + At + *Caching + "\n" + Pad + "}\n" + Pad +
          "}\n" + lineDirective(L.EndLine, L.LineFile);
  // The rest of its last line at its column, unless it is blank.
  const llvm::StringRef Rest = FileText.substr(L.End).split('\n').first;
  if (!Rest.trim().empty())
    Text += std::string(L.EndCol - 1, ' ');
  for (const Edit &E : Inside)
    Edits.erase(E);
  Edits.insert(Edit{L.File, L.Begin, L.End - L.Begin, std::move(Text)});
}

std::set<std::string>
TransformPlanner::reachable(const std::string &Key) const {
  std::set<std::string> Seen;
  std::vector<std::string> Work{Key};
  while (!Work.empty()) {
    std::string K = Work.back();
    Work.pop_back();
    auto It = Facts.Functions.find(K);
    if (It == Facts.Functions.end())
      continue;
    for (const std::string &Callee : It->second.Callees)
      if (Seen.insert(Callee).second)
        Work.push_back(Callee);
  }
  return Seen;
}

std::string TransformPlanner::confinementObstacle(const KernelDecision &D) {
  for (const Hazard &H : D.Reasons)
    if (!H.RunsFree.empty())
      return H.RunsFree;
  return {};
}

std::optional<Hazard> TransformPlanner::keptOriginalHazard(
    const FunctionFacts &K, const std::set<std::string> &Reached) const {
  // The kept original calls the same device functions as the persistent
  // form, which read (or the rewrite makes read) the logical block that
  // only the persistent form publishes.
  const std::string Kept =
      (K.NeedsOriginal
           ? std::string("launched from other files (declared or "
                         "defined in a header)")
           : "its address at line " +
                 std::to_string(K.OriginalUses.begin()->first.Line) + " is " +
                 K.OriginalUses.begin()->second) +
      ", so its original definition is kept, but it calls ";
  const std::string Logical =
      "device code that reads smpart::blockIdx(), which only the persistent "
      "form publishes";
  if (K.ReadsLogicalBlockOpaquely)
    return Hazard{Kept + Logical, K.Where, {}};
  for (const std::string &Key : Reached) {
    const FunctionFacts &C = Facts.Functions.at(Key);
    if (!C.ReadsBlockId && !C.ReadsLogicalBlockOpaquely)
      continue;
    return Hazard{Kept + "'" + C.Name + "', which " +
                      (C.ReadsBlockId ? "reads blockIdx/gridDim and would be "
                                        "rewritten for the persistent form "
                                        "only"
                                      : "calls " + Logical),
                  K.Where,
                  {{C.Where, "'" + C.Name + "' declared here"}}};
  }
  return std::nullopt;
}

TransformPlan TransformPlanner::plan() const {
  TransformPlan Plan;
  std::map<std::string, KernelDecision> Decisions;
  std::map<std::string, std::set<std::string>> Reach;

  std::set<std::string> Launched;
  for (const LaunchFacts &L : Facts.Launches)
    Launched.insert(L.KernelKey);
  for (const auto &[Key, F] : Facts.Functions) {
    if (!F.IsKernel || !F.Body.Valid)
      continue;
    KernelDecision D;
    D.Kernel = &F;
    Reach[Key] = reachable(Key);
    if (Only && !Only->match(llvm::StringRef(F.Name))) {
      D.Status = KernelStatus::Excluded;
      D.Reasons.push_back({"not matched by --kernels", F.Where, {}});
    } else if (Exclude && Exclude->match(llvm::StringRef(F.Name))) {
      D.Status = KernelStatus::Excluded;
      D.Reasons.push_back({"matched by --exclude-kernels", F.Where, {}});
    } else {
      D.Reasons.assign(F.Hazards.begin(), F.Hazards.end());
      // Uses of its address name the original (KernelAddressRewrite),
      // unless the rewrite would run nowhere.
      const bool Pinned =
          !F.OriginalUses.empty() && (F.NeedsOriginal || Launched.count(Key));
      if (!F.OriginalUses.empty() && !Pinned)
        D.Reasons.insert(D.Reasons.end(), F.UnlaunchedHazards.begin(),
                         F.UnlaunchedHazards.end());
      if (F.NeedsOriginal || Pinned)
        if (std::optional<Hazard> H = keptOriginalHazard(F, Reach[Key]))
          D.Reasons.push_back(std::move(*H));
      // (A kernel that needs it for other files was refused for this by
      // PersistentKernelRewrite already.)
      if (Pinned && !F.NeedsOriginal && F.OriginalUncopyable)
        for (const auto &[At, How] : F.OriginalUses)
          D.Reasons.push_back(
              {"its address at line " + std::to_string(At.Line) + " is " + How +
                   "; that use names its original definition, which cannot "
                   "be kept beside the rewritten one (its definition or a "
                   "declaration cannot be copied: spelled in a macro, or a "
                   "template with explicit instantiations)",
               F.Where,
               {{At, "address of the kernel taken here"}}});
      for (const std::string &Callee : Reach[Key]) {
        const FunctionFacts &C = Facts.Functions.at(Callee);
        for (const Hazard &H : C.Hazards)
          D.Reasons.push_back(
              {H.Reason + " in '" + C.Name + "', called from it",
               F.Where,
               {{H.Where, H.Reason}},
               H.RunsFree});
      }
      // The same construct seen by both parses, or twice on one line.
      std::set<std::string> Seen;
      llvm::erase_if(D.Reasons, [&](const Hazard &H) {
        return !Seen.insert(H.Reason).second;
      });
      if (!D.Reasons.empty())
        D.Status = KernelStatus::Refused;
    }
    Decisions[Key] = std::move(D);
  }

  auto transformed = [&](const std::string &Key) {
    auto It = Decisions.find(Key);
    return It != Decisions.end() &&
           It->second.Status == KernelStatus::Transformed;
  };
  auto refuse = [&](const std::string &Key, Hazard Why) {
    Decisions[Key].Status = KernelStatus::Refused;
    Decisions[Key].Reasons.push_back(std::move(Why));
  };

  for (bool Changed = true; Changed;) {
    Changed = false;
    // A device function reading blockIdx serves either only transformed
    // kernels (and is rewritten) or none.
    for (const auto &[Key, D] : Decisions) {
      if (D.Status == KernelStatus::Transformed)
        continue;
      for (const std::string &Callee : Reach[Key]) {
        const FunctionFacts &C = Facts.Functions.at(Callee);
        if (!C.ReadsBlockId)
          continue;
        for (auto &[Other, OD] : Decisions)
          if (OD.Status == KernelStatus::Transformed &&
              Reach[Other].count(Callee)) {
            refuse(Other, {"calls '" + C.Name +
                               "', which reads blockIdx/gridDim and is also "
                               "called from kernel '" +
                               D.Kernel->Name + "', which is not transformed",
                           OD.Kernel->Where,
                           {{C.Where, "'" + C.Name + "' declared here"}}});
            Changed = true;
          }
      }
    }
    // A launch spelled in a macro body: all kernels it launches, or none.
    std::map<std::pair<std::string, unsigned>, std::set<std::string>> ByMacro;
    for (const LaunchFacts &L : Facts.Launches)
      if (!L.MacroName.empty() && !L.Edits.empty())
        ByMacro[{L.Edits.begin()->File, L.Edits.begin()->Offset}].insert(
            L.KernelKey);
    for (const auto &[Where, Kernels] : ByMacro) {
      auto Untransformed =
          std::find_if(Kernels.begin(), Kernels.end(),
                       [&](const std::string &K) { return !transformed(K); });
      if (Untransformed == Kernels.end())
        continue;
      std::string Other = Facts.Functions.count(*Untransformed)
                              ? Facts.Functions.at(*Untransformed).Name
                              : *Untransformed;
      for (const std::string &K : Kernels)
        if (transformed(K)) {
          refuse(K, {"launched through a macro that also launches kernel '" +
                         Other + "', which is not transformed",
                     Decisions[K].Kernel->Where,
                     {}});
          Changed = true;
        }
    }
  }

  // Edits: transformed kernels, the device functions they reach, their
  // launches.
  std::set<std::string> RewrittenFunctions;
  // The warnings of originals kept for the uses of their addresses: what
  // pointer launches do is decided below.
  std::vector<std::pair<KernelDecision *, std::size_t>> KeptForAddressUses;
  for (auto &[Key, D] : Decisions) {
    if (D.Status != KernelStatus::Transformed)
      continue;
    const FunctionFacts &K = *D.Kernel;
    std::set<Edit> &Out = Plan.EditsByFile[K.Body.File];
    // The kernel itself reads its local `blockIdx`; what it calls reads
    // smpart::blockIdx(), or may (another translation unit).
    std::vector<const FunctionFacts *> Reached{&K};
    for (const std::string &Callee : Reach[Key])
      Reached.push_back(&Facts.Functions.at(Callee));
    const bool Publish = llvm::any_of(Reached, [&](const FunctionFacts *F) {
      return (F != &K && F->ReadsBlockId) || F->ReadsLogicalBlockOpaquely ||
             !F->UnseenCallees.empty();
    });
    for (const FunctionFacts *F : Reached)
      for (const auto &[Name, Where] : F->UnseenCallees)
        D.Warnings.push_back(
            {"calls '" + Name +
                 "', which this translation unit does not define (separate "
                 "compilation): if it reads blockIdx/gridDim, its file must "
                 "be rewritten by smpart-transform too, or it reads the "
                 "physical block",
             Where,
             {}});
    // An original kept by choice calls the same device functions, which
    // the rewrite makes read the logical block of a persistent CTA: then
    // it is not kept (one that must be kept refused the kernel above).
    D.KeepsOriginal = K.NeedsOriginal || !K.OriginalUses.empty() ||
                      (K.WantsOriginal && !K.OriginalUncopyable && !Publish);
    if (!K.OriginalUses.empty()) {
      // One warning per kernel, at its first such use, listing the lines
      // (named with their file where it is not the kernel's).
      std::vector<std::string> Lines;
      for (const auto &[At, How] : K.OriginalUses) {
        std::string Line = std::to_string(At.Line);
        if (At.File != K.Where.File)
          Line = llvm::sys::path::filename(At.File).str() + ":" + Line;
        if (Lines.empty() || Lines.back() != Line)
          Lines.push_back(Line);
      }
      std::string List;
      for (std::size_t I = 0; I < Lines.size(); ++I)
        List += (I == 0                  ? ""
                 : I + 1 == Lines.size() ? " and "
                                         : ", ") +
                Lines[I];
      D.Warnings.push_back(
          {"keeps its original definition beside the rewritten one for the "
           "use" +
               std::string(Lines.size() > 1 ? "s" : "") +
               " of its address at line" + (Lines.size() > 1 ? "s " : " ") +
               List +
               " (a graph node, a launch API, a function pointer or table): "
               "what launches it there runs the original, unchanged and "
               "outside smpart's plan",
           K.OriginalUses.begin()->first,
           {}});
      KeptForAddressUses.push_back({&D, D.Warnings.size() - 1});
    }
    if (D.KeepsOriginal)
      for (const Edit &E : K.OriginalEdits)
        Plan.EditsByFile[E.File].insert(E);
    if (K.Body.OpenOffset + 1 == K.Body.CloseOffset) { // `{}`
      Out.insert(Edit{K.Body.File, K.Body.CloseOffset, 0,
                      prologue(K.Body, Publish) + epilogue(K.Body)});
    } else {
      Out.insert(Edit{K.Body.File, K.Body.OpenOffset + 1, 0,
                      prologue(K.Body, Publish)});
      Out.insert(Edit{K.Body.File, K.Body.CloseOffset, 0, epilogue(K.Body)});
    }
    for (const Edit &E : K.Edits)
      Plan.EditsByFile[E.File].insert(E);
    if (!K.MaxBlockSizeRead)
      for (const Edit &E : K.LaunchBoundsEdits)
        Plan.EditsByFile[E.File].insert(E);
    for (const TagSwitchedText &L : K.TagSwitchedTexts) {
      // Taken by one parse, refused (at or inside it) by the other: kept.
      const auto Refused = K.UnswitchRefused.lower_bound({L.File, L.Begin});
      if (Refused == K.UnswitchRefused.end() || Refused->first != L.File ||
          Refused->second >= L.End)
        Plan.TagSwitchedByFile[L.File].insert(L);
    }
    RewrittenFunctions.insert(Reach[Key].begin(), Reach[Key].end());
  }
  for (const std::string &Key : RewrittenFunctions)
    for (const Edit &E : Facts.Functions.at(Key).Edits)
      Plan.EditsByFile[E.File].insert(E);
  for (const LaunchFacts &L : Facts.Launches) {
    if (!transformed(L.KernelKey))
      continue;
    for (const Edit &E : L.Edits)
      Plan.EditsByFile[E.File].insert(E);
    for (const Edit &E : Decisions[L.KernelKey].KeepsOriginal
                             ? L.WithOriginal
                             : L.WithoutOriginal)
      Plan.EditsByFile[E.File].insert(E);
  }

  // Refused kernels held to a partition: all their launches or none.
  const std::string NoLaunchByName =
      "no <<<>>> launch of it by name in the rewritten files";
  for (auto &[Key, D] : Decisions) {
    if (D.Status != KernelStatus::Refused)
      continue;
    D.FreeBecause =
        ConfineRefused ? confinementObstacle(D) : "--confine-refused=false";
    std::vector<const LaunchFacts *> Launches;
    for (const LaunchFacts &L : Facts.Launches)
      if (L.KernelKey == Key)
        Launches.push_back(&L);
    if (D.FreeBecause.empty() && Launches.empty())
      D.FreeBecause = NoLaunchByName;
    if (D.FreeBecause.empty())
      for (const LaunchFacts *L : Launches)
        if (!L->Confined)
          D.FreeBecause = "its launch at line " +
                          std::to_string(L->Where.Line) +
                          " cannot be edited (a macro body or spelled across "
                          "files)";
    if (!D.FreeBecause.empty())
      continue;
    D.Confined = true;
    for (const LaunchFacts *L : Launches)
      for (const Edit &E : *L->Confined)
        Plan.EditsByFile[E.File].insert(E);
  }

  // A launch through a pointer may launch any kernel whose address the
  // file takes. All of a kernel's launches or none: the pointer launches
  // run free if one of those kernels runs free where it is launched by
  // name, must run free, or is left alone by the user.
  std::string PointerMayHoldFree;
  for (const auto &[Key, D] : Decisions) {
    if (!D.Kernel->AddressTaken || !PointerMayHoldFree.empty())
      continue;
    const std::string Who = "the pointer may hold kernel '" + D.Kernel->Name;
    if (D.Status == KernelStatus::Excluded)
      PointerMayHoldFree = Who + "', which --kernels/--exclude-kernels leave "
                                 "unchanged";
    else if (D.Status == KernelStatus::Refused && !D.Confined &&
             D.FreeBecause != NoLaunchByName)
      PointerMayHoldFree = Who + "', which runs on every SM: " + D.FreeBecause;
  }
  std::string ConfinedPointerLines;
  for (const auto &[Where, L] : Facts.PointerLaunches) {
    PointerLaunchDecision D{
        &L, false, ConfineRefused ? L.FreeBecause : "--confine-refused=false"};
    if (D.FreeBecause.empty())
      D.FreeBecause = PointerMayHoldFree;
    if (D.FreeBecause.empty() && L.Confined) {
      D.Confined = true;
      for (const Edit &E : *L.Confined)
        Plan.EditsByFile[E.File].insert(E);
      ConfinedPointerLines += (ConfinedPointerLines.empty() ? "" : ", ") +
                              Where.File + ":" + std::to_string(Where.Line);
    }
    Plan.PointerLaunches.push_back(std::move(D));
  }
  // A refused kernel launched only through pointers runs on its partition
  // wherever a confined pointer launch launches it, and so does an
  // original kept for the uses of its address.
  if (!ConfinedPointerLines.empty())
    for (const auto &[D, Warning] : KeptForAddressUses)
      D->Warnings[Warning].Reason +=
          ", but for the <<<>>> launches through a kernel pointer at " +
          ConfinedPointerLines +
          ", which run on the partition of the kernel the pointer "
          "holds";
  if (!ConfinedPointerLines.empty())
    for (auto &[Key, D] : Decisions)
      if (D.FreeBecause == NoLaunchByName && D.Kernel->AddressTaken)
        D.FreeBecause += " (the launches through a kernel pointer, at " +
                         ConfinedPointerLines +
                         ", run on the partition of the kernel the pointer "
                         "holds)";

  for (auto &[Key, D] : Decisions)
    Plan.Kernels.push_back(std::move(D));
  std::sort(Plan.Kernels.begin(), Plan.Kernels.end(),
            [](const KernelDecision &A, const KernelDecision &B) {
              return A.Kernel->Where < B.Kernel->Where;
            });
  return Plan;
}

} // namespace smpart
