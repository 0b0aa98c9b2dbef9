#include "pipeline/OutputSet.h"

#include "pipeline/CanonicalPath.h"
#include "pipeline/OutputFile.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

namespace smpart {

void OutputSet::add(std::string Destination, std::string Text,
                    std::string Source, std::string Input) {
  Writes.push_back({std::move(Destination), std::move(Text), std::move(Source),
                    std::move(Input)});
}

bool OutputSet::checkCollisions() const {
  bool Ok = true;
  std::map<std::string, const PendingWrite *> ByPath;
  for (const PendingWrite &W : Writes) {
    if (W.Destination == "-")
      continue;
    auto [It, New] = ByPath.emplace(canonicalPath(W.Destination), &W);
    if (New || It->second->Text == W.Text)
      continue;
    const PendingWrite &First = *It->second;
    llvm::errs() << "smpart-transform: error: '" << W.Destination << "' ";
    if (First.Source != W.Source)
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

bool OutputSet::write(llvm::StringRef OutputDir) const {
  bool Ok = true;
  std::set<std::string> Done, Unmade;
  for (const PendingWrite &W : Writes) {
    if (W.Destination != "-" &&
        !Done.insert(canonicalPath(W.Destination)).second)
      continue;
    // Under OutputDir, the folder of each destination is made here: OutputDir
    // itself, or the subfolder of a header below its main file's folder
    // (out/inc/k.cuh). A folder that cannot be made is named once.
    llvm::StringRef Parent = llvm::sys::path::parent_path(W.Destination);
    if (!OutputDir.empty() && W.Destination != "-" && !Parent.empty())
      if (std::error_code EC = llvm::sys::fs::create_directories(Parent)) {
        if (Unmade.insert(Parent.str()).second)
          llvm::errs() << "smpart-transform: error: cannot create '" << Parent
                       << "': " << EC.message() << "\n";
        Ok = false;
        continue;
      }
    Ok &= OutputFile::write(W.Destination, W.Text);
  }
  return Ok;
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

bool OutputSet::writeDepFile(llvm::StringRef Path) const {
  if (Targets.empty())
    return true;
  std::string Rule;
  for (const std::string &T : Targets)
    Rule += (Rule.empty() ? "" : " ") + makeEscape(T);
  Rule += ":";
  for (const std::string &D : Dependencies)
    Rule += " \\\n  " + makeEscape(D);
  Rule += "\n";
  return OutputFile::write(Path, Rule);
}

} // namespace smpart
