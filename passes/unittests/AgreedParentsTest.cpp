#include "analysis/AgreedParents.h"

#include "AstTestSupport.h"

#include <gtest/gtest.h>

using namespace clang;
using namespace clang::ast_matchers;

namespace smpart {
namespace {

// `k` as the callee of a launch in a function template: the instantiation
// reuses the pattern's (non-dependent) name, which so has two parents: the
// pattern's launch itself, and the instantiation's cast of it to a
// function pointer.
const char *const LaunchInTemplate =
    "__global__ void k(int);\n"
    "template <class T> void launch(T x) { k<<<1, 1>>>(x); }\n"
    "void use() { launch(1); }\n";

const DeclRefExpr *nameOfK(ASTContext &Ctx) {
  return test::findFirst<DeclRefExpr>(
      Ctx, declRefExpr(to(functionDecl(hasName("k")))).bind("k"), "k");
}

TEST(AgreedParents, ParentsThatAgreeGiveTheirAnswer) {
  auto AST = test::buildCudaAst(LaunchInTemplate);
  ASSERT_TRUE(AST);
  ASTContext &Ctx = AST->getASTContext();
  const DeclRefExpr *Name = nameOfK(Ctx);
  ASSERT_TRUE(Name);
  ASSERT_EQ(Ctx.getParents(*Name).size(), 2u);
  EXPECT_TRUE(agreedOverParents(*Name, Ctx, false, [](const Stmt *P) {
    return isa_and_nonnull<CUDAKernelCallExpr, ImplicitCastExpr>(P);
  }));
}

TEST(AgreedParents, ParentsThatDifferGiveDisagree) {
  auto AST = test::buildCudaAst(LaunchInTemplate);
  ASSERT_TRUE(AST);
  ASTContext &Ctx = AST->getASTContext();
  const DeclRefExpr *Name = nameOfK(Ctx);
  ASSERT_TRUE(Name);
  enum class Parent { Disagree, Launch, Other };
  EXPECT_EQ(agreedOverParents(*Name, Ctx, Parent::Disagree,
                              [](const Stmt *P) {
                                return isa_and_nonnull<CUDAKernelCallExpr>(P)
                                           ? Parent::Launch
                                           : Parent::Other;
                              }),
            Parent::Disagree);
}

TEST(AgreedParents, OneParentGivesItsAnswer) {
  auto AST = test::buildCudaAst("__global__ void k(int);\n"
                                "void use() { k<<<1, 1>>>(0); }\n");
  ASSERT_TRUE(AST);
  ASTContext &Ctx = AST->getASTContext();
  const DeclRefExpr *Name = nameOfK(Ctx);
  const auto *Launch = test::findFirst<CUDAKernelCallExpr>(
      Ctx, cudaKernelCallExpr().bind("l"), "l");
  ASSERT_TRUE(Name && Launch);
  // The launch's callee: the cast of the name to a function pointer.
  EXPECT_EQ(agreedOverParents(*Name, Ctx, static_cast<const Stmt *>(nullptr),
                              [](const Stmt *P) { return P; }),
            Launch->getCallee());
}

} // namespace
} // namespace smpart
