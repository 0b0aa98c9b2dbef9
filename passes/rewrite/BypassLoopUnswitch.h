// Emits the code around tagged loads twice, behind one test of the CTA's
// bypass tag:
//
//   { if (smpart_cta.bypass()) { TEXT, tag true } else { TEXT, tag false } }
//
// With the tag a run-time value, every load sits behind its own branch
// between ld.global.cg and ld.global, and nvcc neither batches nor
// unswitches them (the tag is not known to be uniform): sgemm_naive's inner
// loop issued one load at a time and ran 2.5x its original, and a stencil's
// loads are issued between the additions that use them. In each copy the
// tag is a constant, so its loads compile as the original's.
//
// TEXT is the kernel body's statements, if none of them prevents it (a
// __shared__ declaration does), else the outermost loop around the load
// that can be copied. The tag is constant for a whole logical block, and the
// text is part of one, so the copies run the same program. Nothing a second
// copy would change is taken: labels, a `case` of an enclosing switch, static,
// __shared__ or extern locals (a copy would be a second object), asm (its
// labels), preprocessor lines but #pragma inside or right before, a macro
// reaching past its ends. Taken texts never nest. This class finds them;
// the copies are written from the file's text with the edits inside
// (TransformPlanner::unswitch), since other rewrites edit it too.
#pragma once

#include "pipeline/Facts.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Expr.h"

#include <map>
#include <optional>

namespace smpart {

class BypassLoopUnswitch {
public:
  /// Records in \p F the outermost text around \p Access (a load
  /// BypassLoadRewrite tags) that can be written twice, if any: the
  /// kernel body's statements, or else a loop. What cannot is recorded as
  /// refused: the host and device parses must both take a text for it to be
  /// written twice.
  void noteLoad(const clang::Expr &Access, const clang::FunctionDecl &Kernel,
                clang::ASTContext &AST, FunctionFacts &F);
  void clear() { Described.clear(); }

private:
  /// The text of the statements `First` to `Last` (one loop, or a whole
  /// body) and its place, or nullopt if the text cannot be written
  /// twice (directives, macros past its ends); the caller has checked the
  /// statements themselves (labels, statics, ... in the instance and, for
  /// a template, in the pattern, which holds what `if constexpr` dropped).
  static std::optional<TagSwitchedText> describe(const clang::Stmt &First,
                                                 const clang::Stmt &Last,
                                                 clang::ASTContext &AST);

  /// describe() of \p S, a loop or the kernel body (its statements), if nothing
  /// in them prevents a second copy; else nullopt, and the refusal is
  /// recorded in \p F. Once per statement.
  const std::optional<TagSwitchedText> &
  copyable(const clang::Stmt &S, const clang::FunctionDecl &Kernel,
           clang::ASTContext &AST, FunctionFacts &F);

  /// copyable() of each loop and body seen in this translation unit.
  std::map<const clang::Stmt *, std::optional<TagSwitchedText>> Described;
};

} // namespace smpart
