// Builds a host-side CUDA AST against the stub cuda.h and finds nodes in it.
#pragma once

#include "clang/AST/ASTContext.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "clang/Frontend/ASTUnit.h"

#include <memory>
#include <string>

namespace smpart::test {

std::unique_ptr<clang::ASTUnit> buildCudaAst(const std::string &Code);

/// The first node bound to `Id` by `Matcher`, or null.
template <class T, class M>
const T *findFirst(clang::ASTContext &Ctx, const M &Matcher, const char *Id) {
  auto Results = clang::ast_matchers::match(Matcher, Ctx);
  return Results.empty() ? nullptr : Results.front().template getNodeAs<T>(Id);
}

} // namespace smpart::test
