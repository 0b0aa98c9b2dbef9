// Routes loads through provably-global pointers in kernel bodies through
// smpart::load(p, tag), which bypasses L1 (ld.global.cg) when the CTA's
// bypass tag is set (the TLP paper's per-block 1-bit tags, Sec. 4.4).
// Loads through a `const T *__restrict__` kernel parameter become
// smpart::load_ro(p, tag): the data is read-only for the whole kernel, so
// both paths may use the non-coherent path (ld.global.nc) that nvcc picks
// for such loads in the original, which a run-time choice between two
// loads would otherwise hide from it. The kernel body, or else a loop,
// around such loads is written once per tag where it can be
// (BypassLoopUnswitch).
#pragma once

#include "analysis/GlobalPointerProvenance.h"
#include "pipeline/RewriteContext.h"
#include "rewrite/BypassLoopUnswitch.h"

#include "clang/ASTMatchers/ASTMatchFinder.h"

#include <map>
#include <memory>

namespace smpart {

class BypassLoadRewrite
    : public clang::ast_matchers::MatchFinder::MatchCallback {
public:
  explicit BypassLoadRewrite(RewriteContext &Ctx) : Ctx(Ctx) {}
  void registerMatchers(clang::ast_matchers::MatchFinder &Finder);
  void
  run(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;
  void onStartOfTranslationUnit() override {
    Provenance.clear();
    Unswitch.clear();
  }

  /// Types worth a bypass load: arithmetic scalars and CUDA vector types.
  static bool isLoadableType(clang::QualType T);
  /// `Pointer` is a `const T *__restrict__` parameter of `Kernel`, maybe
  /// plus an offset: what it points to is read-only during the kernel.
  static bool isReadOnlyParam(const clang::Expr *Pointer,
                              const clang::FunctionDecl &Kernel);

private:
  RewriteContext &Ctx;
  /// One provenance analysis per kernel (or instantiation) and parse.
  std::map<const clang::FunctionDecl *,
           std::unique_ptr<GlobalPointerProvenance>>
      Provenance;
  /// The code around tagged loads written once per tag.
  BypassLoopUnswitch Unswitch;
};

} // namespace smpart
