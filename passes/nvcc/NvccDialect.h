// nvcc accepts a few spellings clang-22 rejects. The tool parses a copy of
// the source in which such spellings are replaced by clang's, with the
// length of every line unchanged, so that every offset, line and column the
// parse reports holds for the original text the edits are applied to.
#pragma once

#include "llvm/ADT/StringRef.h"

#include <string>

namespace smpart {

class NvccDialect {
public:
  /// `k<< <g, b>> >(args)`: nvcc takes the chevrons with spaces between;
  /// they become ` <<<g, b>>> (args)` (same length; the launch rewrite
  /// replaces whole ranges, so the moved spaces disappear with them).
  ///
  /// `asm("mov.u64 %0, %globaltimer;")`: nvcc passes single-`%` PTX special
  /// registers through; clang reads them as operand escapes. In the copy
  /// they are doubled and a blank of the same string goes.
  ///
  /// `asm("..." :: "r"(v) "l"(p))`: nvcc takes operands without a comma
  /// between them; the blank before the second constraint becomes one.
  static std::string forClang(llvm::StringRef Code);
};

} // namespace smpart
