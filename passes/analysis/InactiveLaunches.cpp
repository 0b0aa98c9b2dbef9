#include "analysis/InactiveLaunches.h"

#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/StringExtras.h"

using namespace clang;

namespace smpart {

void InactiveLaunches::SourceRangeSkipped(SourceRange Range,
                                          SourceLocation EndifLoc) {
  SourceLocation Begin = SM.getSpellingLoc(Range.getBegin());
  if (Begin.isInvalid() || !Rewritable(Begin))
    return;
  bool Invalid = false;
  const unsigned B = SM.getFileOffset(Begin);
  const unsigned E = SM.getFileOffset(SM.getSpellingLoc(Range.getEnd()));
  llvm::StringRef Buffer = SM.getBufferData(SM.getFileID(Begin), &Invalid);
  if (Invalid || E <= B || E > Buffer.size())
    return;
  OptionalFileEntryRef FE = SM.getFileEntryRefForID(SM.getFileID(Begin));
  const std::string File = FE ? FE->getName().str() : "";
  for (const SkippedLaunch &L :
       scan(Buffer.slice(B, E), File, SM.getSpellingLineNumber(Begin),
            SM.getSpellingColumnNumber(Begin)))
    Out.insert(L);
}

std::set<SkippedLaunch> InactiveLaunches::scan(llvm::StringRef Text,
                                               const std::string &File,
                                               unsigned Line, unsigned Col) {
  std::set<SkippedLaunch> Found;
  auto IsIdent = [](char C) { return llvm::isAlnum(C) || C == '_'; };
  unsigned L = Line, C = Col;
  for (size_t I = 0; I < Text.size(); ++I) {
    const char Ch = Text[I];
    if (Ch == '\n') {
      ++L;
      C = 1;
      continue;
    }
    if (!IsIdent(Ch) || (I > 0 && IsIdent(Text[I - 1]))) {
      ++C;
      continue;
    }
    size_t End = I;
    while (End < Text.size() && IsIdent(Text[End]))
      ++End;
    llvm::StringRef Name = Text.slice(I, End);
    // Skip template arguments and spaces, then look for <<< (or << <).
    size_t J = End;
    while (J < Text.size() && (Text[J] == ' ' || Text[J] == '\t'))
      ++J;
    if (J < Text.size() && Text[J] == '<' && !Text.substr(J).starts_with("<<")) {
      int Depth = 0;
      for (; J < Text.size(); ++J) {
        Depth += Text[J] == '<' ? 1 : Text[J] == '>' ? -1 : 0;
        if (Depth == 0)
          break;
      }
      ++J;
      while (J < Text.size() && (Text[J] == ' ' || Text[J] == '\t'))
        ++J;
    }
    std::string Chevrons;
    for (size_t K = J; K < Text.size() && Chevrons.size() < 3; ++K) {
      if (Text[K] == '<')
        Chevrons += '<';
      else if (Text[K] != ' ' && Text[K] != '\t')
        break;
    }
    if (Chevrons == "<<<" && !llvm::isDigit(Name.front()))
      Found.insert({Name.str(), Place{File, L, C}});
    C += static_cast<unsigned>(End - I);
    I = End - 1;
  }
  return Found;
}

void InactiveLaunches::refuse(const std::set<SkippedLaunch> &Host,
                              const std::set<SkippedLaunch> &Device,
                              FileFacts &Facts) {
  for (const SkippedLaunch &L : Host) {
    if (!Device.count(L))
      continue; // active in the other parse: rewritten there
    for (auto &[Key, F] : Facts.Functions) {
      if (!F.IsKernel)
        continue;
      llvm::StringRef Name(F.Name);
      const size_t Colon = Name.rfind("::");
      if (Colon != llvm::StringRef::npos)
        Name = Name.drop_front(Colon + 2);
      if (Name != L.Kernel)
        continue;
      F.Hazards.insert(
          {"launched in code the preprocessor skipped (line " +
               std::to_string(L.Where.Line) +
               "): that configuration would still launch it with <<<>>>",
           F.Where,
           {{L.Where, "launch in an inactive preprocessor branch"}}});
    }
  }
}

} // namespace smpart
