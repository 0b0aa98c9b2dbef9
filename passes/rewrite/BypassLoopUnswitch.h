// Emits a loop of a kernel body that holds tagged loads twice, behind one
// test of the CTA's bypass tag:
//
//   { if (smpart_cta.bypass()) { LOOP, tag true } else { LOOP, tag false } }
//
// With the tag a run-time value, every load of the loop sits behind its own
// branch between ld.global.cg and ld.global, and nvcc neither batches nor
// unswitches them (the tag is not known to be uniform): sgemm_naive's inner
// loop issued one load at a time and ran 2.5x its original. In each copy
// the tag is a constant, so its loads compile as the original's.
//
// The tag is constant for a whole logical block, and a loop is part of one,
// so the copies run the same program. Only loops whose text can be written
// twice without changing it are taken: no labels, no `case` of an
// enclosing switch, no static, __shared__ or extern locals (a copy would be
// a second object), no asm (its labels), no preprocessor line but #pragma
// inside or right before, no macro reaching past its ends. The outermost such
// loop around a load is taken, so taken loops never nest. This class finds the
// loops; the copies are written from the file's text with the edits inside the
// loop (TransformPlanner::unswitchLoop), since other rewrites edit it too.
#pragma once

#include "pipeline/Facts.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Expr.h"

#include <map>
#include <optional>

namespace smpart {

class BypassLoopUnswitch {
public:
  /// Records in \p F the outermost loop of the kernel around \p Access (a
  /// load BypassLoadRewrite tags) that can be written twice, if any.
  /// A loop that cannot is recorded as refused: the host and device parses
  /// must both take a loop for it to be written twice.
  void noteLoad(const clang::Expr &Access, const clang::FunctionDecl &Kernel,
                clang::ASTContext &AST, FunctionFacts &F);
  void clear() { Loops.clear(); }

  /// The loop's text and place, or nullopt if it cannot be written twice.
  /// In a template instance, the pattern's loop is checked too: it holds
  /// the branches `if constexpr` discarded.
  static std::optional<TagSwitchedLoop>
  describe(const clang::Stmt &Loop, const clang::FunctionDecl &Kernel,
           clang::ASTContext &AST);

private:
  /// describe() of each loop seen in this translation unit.
  std::map<const clang::Stmt *, std::optional<TagSwitchedLoop>> Loops;
};

} // namespace smpart
