#include "pipeline/OutputSet.h"

#include "pipeline/CanonicalPath.h"
#include "pipeline/OutputFile.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

namespace smpart {

namespace fs = llvm::sys::fs;

void OutputSet::add(std::string Destination, std::string Text,
                    std::string Source, std::string Input) {
  Writes.push_back({std::move(Destination), std::move(Text), std::move(Source),
                    std::move(Input), ""});
}

void OutputSet::addReport(std::string Destination, std::string Text,
                          std::string What) {
  Writes.push_back(
      {std::move(Destination), std::move(Text), "", "", std::move(What)});
}

bool OutputSet::empty() const {
  for (const PendingWrite &W : Writes)
    if (W.Report.empty())
      return false;
  return true;
}

std::string OutputSet::describe(const PendingWrite &W) {
  return W.Report.empty() ? "the rewrite of '" + W.Source + "'" : W.Report;
}

bool OutputSet::checkCollisions(bool InPlace) const {
  bool Ok = true;
  std::set<std::string> Read;
  for (const std::string &D : Dependencies)
    Read.insert(canonicalPath(D));
  std::map<std::string, const PendingWrite *> ByTarget;
  for (const PendingWrite &W : Writes) {
    bool Special = false;
    const std::string Target =
        canonicalPath(OutputFile::destination(W.Destination, Special));
    if (Special)
      continue;
    // Only a rewrite in place may replace what the run reads: anything else
    // there (-o naming the input, --manifest naming a header) loses a source.
    if (Read.count(Target) &&
        !(InPlace && W.Report.empty() && canonicalPath(W.Source) == Target)) {
      llvm::errs() << "smpart-transform: error: '" << W.Destination
                   << "' is a file this run reads; " << describe(W)
                   << " would replace it"
                   << (W.Report.empty() ? " (-i rewrites in place)" : "")
                   << "\n";
      Ok = false;
      continue;
    }
    auto [It, New] = ByTarget.emplace(Target, &W);
    if (New || It->second->Text == W.Text)
      continue;
    const PendingWrite &First = *It->second;
    llvm::errs() << "smpart-transform: error: '" << W.Destination << "' ";
    if (!First.Report.empty() || !W.Report.empty())
      llvm::errs() << "would be written as both " << describe(First) << " and "
                   << describe(W) << "\n";
    else if (First.Source != W.Source)
      llvm::errs() << "would be written from both '" << First.Source
                   << "' and '" << W.Source << "', differently\n";
    else
      llvm::errs() << "would be written from '" << W.Source
                   << "' differently for '" << First.Input << "' and '"
                   << W.Input << "'\n";
    Ok = false;
  }
  return Ok;
}

/// Makes \p Folder and its missing parents; the topmost one made goes to
/// \p Made, so that a failed run can remove what it made. A folder that
/// cannot be made is named once (\p Unmade).
static bool makeFolder(llvm::StringRef Folder, std::vector<std::string> &Made,
                       std::set<std::string> &Unmade) {
  llvm::StringRef Top;
  for (llvm::StringRef P = Folder; !P.empty() && !fs::exists(P);
       P = llvm::sys::path::parent_path(P))
    Top = P;
  if (std::error_code EC = fs::create_directories(Folder)) {
    if (Unmade.insert(Folder.str()).second)
      llvm::errs() << "smpart-transform: error: cannot create '" << Folder
                   << "': " << EC.message() << "\n";
    return false;
  }
  if (!Top.empty())
    Made.push_back(Top.str());
  return true;
}

bool isInFolder(llvm::StringRef Path, llvm::StringRef Dir) {
  auto Absolute = [](llvm::StringRef P) {
    llvm::SmallString<256> A(P);
    fs::make_absolute(A);
    llvm::sys::path::remove_dots(A, /*remove_dot_dot=*/true);
    return std::string(A);
  };
  const std::string D = Absolute(Dir), F = Absolute(Path);
  return F.size() > D.size() && llvm::StringRef(F).starts_with(D) &&
         llvm::sys::path::is_separator(F[D.size()]);
}

bool OutputSet::write(llvm::StringRef OutputDir, bool ReportsOnly) const {
  std::vector<OutputFile> Files;
  std::set<std::string> Done, Unmade;
  std::vector<std::string> Made;
  bool Ok = true;
  // Stage: every regular file in a temporary file beside its target.
  for (const PendingWrite &W : Writes) {
    if (ReportsOnly && W.Report.empty())
      continue;
    OutputFile File(W.Destination, W.Text);
    if (!File.special() && !Done.insert(canonicalPath(File.target())).second)
      continue; // checkCollisions() saw the same text
    // Under OutputDir, the folder of each rewrite is made here: OutputDir
    // itself, or the subfolder of a header below its main file's folder
    // (out/inc/k.cuh); so is that of a report asked for inside it
    // (--manifest=out/kernels.json).
    llvm::StringRef Parent = llvm::sys::path::parent_path(W.Destination);
    const bool MakeParent =
        W.Report.empty() || isInFolder(W.Destination, OutputDir);
    if (!OutputDir.empty() && MakeParent && !File.special() &&
        !Parent.empty() && !makeFolder(Parent, Made, Unmade)) {
      Ok = false;
      continue;
    }
    Ok &= File.stage();
    Files.push_back(std::move(File));
  }
  // Nothing the user sees has changed yet: undo what was made.
  auto Abort = [&] {
    for (OutputFile &F : Files)
      F.discard();
    for (auto It = Made.rbegin(); It != Made.rend(); ++It)
      fs::remove_directories(*It);
    return false;
  };
  if (!Ok)
    return Abort();
  // First what cannot be staged (a full device fails here, before any
  // file is replaced), then the renames, which fail only where the folder
  // changed under the run.
  for (OutputFile &F : Files)
    if (F.special() && !F.commit())
      return Abort();
  for (OutputFile &F : Files)
    if (!F.special() && !F.commit())
      return false;
  return true;
}

/// A path in a Makefile rule: spaces and `#` escaped, `$` doubled.
static std::string makeEscape(llvm::StringRef Path) {
  std::string Out;
  for (char C : Path) {
    if (C == ' ' || C == '#')
      Out += '\\';
    else if (C == '$')
      Out += '$';
    Out += C;
  }
  return Out;
}

std::string OutputSet::depFile() const {
  if (Targets.empty())
    return {};
  std::string Rule;
  for (const std::string &T : Targets)
    Rule += (Rule.empty() ? "" : " ") + makeEscape(T);
  Rule += ":";
  for (const std::string &D : Dependencies)
    Rule += " \\\n  " + makeEscape(D);
  Rule += "\n";
  return Rule;
}

} // namespace smpart
