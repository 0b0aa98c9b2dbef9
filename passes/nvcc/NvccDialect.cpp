#include "nvcc/NvccDialect.h"

#include "llvm/ADT/StringExtras.h"

namespace smpart {

/// The end of a run "<<" blanks "<" (or ">>" blanks ">") starting at I, or
/// npos when the text there is not such a run with blanks in it.
static size_t spacedChevrons(llvm::StringRef Code, size_t I, char C) {
  if (I + 3 > Code.size() || Code[I] != C || Code[I + 1] != C)
    return llvm::StringRef::npos;
  size_t J = I + 2;
  while (J < Code.size() && (Code[J] == ' ' || Code[J] == '\t'))
    ++J;
  if (J == I + 2 || J >= Code.size() || Code[J] != C)
    return llvm::StringRef::npos;
  return J + 1;
}

/// PTX special registers nvcc lets inline asm name with a single `%`.
static bool isSpecialRegister(llvm::StringRef Name) {
  static const char *const Names[] = {"globaltimer",
                                      "clock64",
                                      "clock",
                                      "laneid",
                                      "warpid",
                                      "nwarpid",
                                      "smid",
                                      "nsmid",
                                      "gridid",
                                      "lanemask_eq",
                                      "lanemask_le",
                                      "lanemask_lt",
                                      "lanemask_ge",
                                      "lanemask_gt",
                                      "dynamic_smem_size",
                                      "total_smem_size",
                                      "aggr_smem_size",
                                      "ntid",
                                      "tid",
                                      "nctaid",
                                      "ctaid",
                                      "nclusterid",
                                      "clusterid",
                                      "cluster_nctaid",
                                      "cluster_ctaid",
                                      "cluster_nctarank",
                                      "cluster_ctarank",
                                      "is_explicit_cluster",
                                      "envreg",
                                      "pm"};
  for (const char *N : Names)
    if (Name.starts_with(N))
      return true;
  return false;
}

/// In one asm string literal [Begin, End) of Out: `%globaltimer` becomes
/// `%%globaltimer`, and a blank of the same literal goes, so that the
/// literal keeps its length. A literal without a blank to spare is left as
/// it is (clang then reports the escape).
static void doublePercents(std::string &Out, size_t Begin, size_t End) {
  for (size_t I = Begin; I + 1 < End; ++I) {
    if (Out[I] == '%' && Out[I + 1] == '%') {
      ++I;
      continue;
    }
    if (Out[I] != '%' || !llvm::isAlpha(Out[I + 1]))
      continue;
    size_t J = I + 1;
    while (J < End && (llvm::isAlnum(Out[J]) || Out[J] == '_'))
      ++J;
    if (!isSpecialRegister(llvm::StringRef(Out).slice(I + 1, J)))
      continue;
    size_t Blank = llvm::StringRef::npos;
    for (size_t K = Begin; K < End; ++K)
      if (Out[K] == ' ' || Out[K] == '\t') {
        Blank = K;
        if (K > I)
          break;
      }
    if (Blank == llvm::StringRef::npos)
      return;
    Out.insert(I, "%");
    Out.erase(Blank < I ? Blank : Blank + 1, 1);
    I = J; // past the name (shifted by at most one either way)
  }
}

/// The end of the string literal starting at the quote \p K of \p Out.
static size_t stringEnd(const std::string &Out, size_t K) {
  size_t E = K + 1;
  while (E < Out.size() && Out[E] != '"') {
    if (Out[E] == '\\')
      ++E;
    ++E;
  }
  return E;
}

/// `:: "r"(v) "l"(p)`: nvcc takes asm operands without a comma between
/// them; clang wants one. From \p I (just past the template) to the
/// asm's closing parenthesis, a blank between an operand's `)` and the
/// next operand's constraint string becomes the comma.
static void addOperandCommas(std::string &Out, size_t I) {
  int Depth = 1;
  for (; I < Out.size() && Depth > 0; ++I) {
    if (Out[I] == '"') {
      I = stringEnd(Out, I);
      continue;
    }
    if (Out[I] == '(') {
      ++Depth;
    } else if (Out[I] == ')' && --Depth == 1) {
      size_t J = I + 1;
      while (J < Out.size() && (Out[J] == ' ' || Out[J] == '\t'))
        ++J;
      if (J > I + 1 && J < Out.size() && Out[J] == '"')
        Out[J - 1] = ',';
    }
  }
}

/// The string literals of every `asm(...)` / `asm volatile(...)` template.
static void fixAsmTemplates(std::string &Out) {
  for (size_t I = Out.find("asm"); I != std::string::npos;
       I = Out.find("asm", I + 3)) {
    if (I > 0 && (llvm::isAlnum(Out[I - 1]) || Out[I - 1] == '_'))
      continue;
    size_t J = I + 3;
    while (J < Out.size() && Out[J] != '(' && Out[J] != ';' && Out[J] != '{')
      ++J;
    if (J >= Out.size() || Out[J] != '(')
      continue;
    // The template: adjacent string literals up to the first ':' or ')'.
    size_t K = J + 1;
    for (; K < Out.size() && Out[K] != ':' && Out[K] != ')'; ++K) {
      if (Out[K] != '"')
        continue;
      const size_t E = stringEnd(Out, K);
      doublePercents(Out, K + 1, E);
      K = E;
    }
    if (K < Out.size() && Out[K] == ':')
      addOperandCommas(Out, K);
  }
}

std::string NvccDialect::forClang(llvm::StringRef Code) {
  std::string Out = Code.str();
  fixAsmTemplates(Out);
  for (size_t I = 0; I < Out.size(); ++I) {
    const size_t Open = spacedChevrons(Out, I, '<');
    if (Open == llvm::StringRef::npos)
      continue;
    // Blanks first, then <<<: the callee-to-<<< range covers all of it.
    const size_t Blanks = Open - I - 3;
    Out.replace(I, Open - I, std::string(Blanks, ' ') + "<<<");
    // Its closing chevrons: the first ">>>" or ">> >" after it, before the
    // launch's arguments. Nested templates (`A<B<C>> >`) cannot come first:
    // a launch configuration holds expressions.
    for (size_t K = Open; K < Out.size() && Out[K] != ';'; ++K) {
      if (Out.compare(K, 3, ">>>") == 0)
        break;
      const size_t Close = spacedChevrons(Out, K, '>');
      if (Close == llvm::StringRef::npos)
        continue;
      // <<< first, then blanks: the >>>-to-( range covers all of it.
      Out.replace(K, Close - K, ">>>" + std::string(Close - K - 3, ' '));
      break;
    }
    I = Open - 1;
  }
  return Out;
}

} // namespace smpart
