#include "analysis/InactiveLaunches.h"

#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/StringExtras.h"

using namespace clang;

namespace smpart {

void InactiveLaunches::SourceRangeSkipped(SourceRange Range, SourceLocation) {
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
  // Skips [I, To) of text that is not code, keeping line and column.
  auto SkipTo = [&](size_t &I, size_t To) {
    for (; I < To && I < Text.size(); ++I) {
      if (Text[I] == '\n') {
        ++L;
        C = 1;
      } else {
        ++C;
      }
    }
    --I; // the loop below increments
  };
  char Previous = 0; // last non-blank code character before an identifier
  for (size_t I = 0; I < Text.size(); ++I) {
    const char Ch = Text[I];
    if (Ch == '\n') {
      ++L;
      C = 1;
      continue;
    }
    if (Text.substr(I).starts_with("//")) {
      SkipTo(I, Text.find('\n', I) == llvm::StringRef::npos
                    ? Text.size()
                    : Text.find('\n', I));
      continue;
    }
    if (Text.substr(I).starts_with("/*")) {
      const size_t End = Text.find("*/", I + 2);
      SkipTo(I, End == llvm::StringRef::npos ? Text.size() : End + 2);
      continue;
    }
    if ((Ch == '"' || Ch == '\'') && !(I > 0 && IsIdent(Text[I - 1]))) {
      size_t End = I + 1;
      while (End < Text.size() && Text[End] != Ch && Text[End] != '\n')
        End += Text[End] == '\\' ? 2 : 1;
      SkipTo(I, std::min(End + 1, Text.size()));
      continue;
    }
    if (!IsIdent(Ch) && Ch != ' ' && Ch != '\t')
      Previous = Ch;
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
    if (J < Text.size() && Text[J] == '<' &&
        !Text.substr(J).starts_with("<<")) {
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
    const bool Member =
        Previous == '.' || (Previous == '>' && I >= 2 &&
                            Text.substr(0, I).rtrim().ends_with("->"));
    if (!llvm::isDigit(Name.front()) && !Member)
      Found.insert({Name.str(), Place{File, L, C}, Chevrons == "<<<"});
    Previous = 'a';
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
      if (L.Launch)
        F.Hazards.insert(
            {"launched in code the preprocessor skipped (line " +
                 std::to_string(L.Where.Line) +
                 "): that configuration would still launch it with <<<>>>",
             F.Where,
             {{L.Where, "launch in an inactive preprocessor branch"}}});
      else
        F.Hazards.insert(
            {"named in code the preprocessor skipped (line " +
                 std::to_string(L.Where.Line) +
                 "): that configuration would use it with its original "
                 "signature (a graph node, launch API, pointer or another "
                 "definition)",
             F.Where,
             {{L.Where, "named in an inactive preprocessor branch"}}});
    }
  }
}

} // namespace smpart
