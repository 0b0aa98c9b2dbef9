#include "analysis/GlobalPointerProvenance.h"

#include "AstTestSupport.h"

#include <gtest/gtest.h>

using namespace clang;
using namespace clang::ast_matchers;

namespace smpart {
namespace {

/// Whether the pointer read by the first `p[...]`/`*p` whose pointer is
/// named `Name` in kernel `k` is provably global.
bool isGlobalPointer(const std::string &Code, const std::string &Name) {
  auto AST = test::buildCudaAst(Code);
  if (!AST)
    return false;
  ASTContext &Ctx = AST->getASTContext();
  const auto *Kernel = test::findFirst<FunctionDecl>(
      Ctx, functionDecl(hasName("k"), isDefinition()).bind("k"), "k");
  auto Ref = declRefExpr(to(varDecl(hasName(Name))));
  const auto *Pointer = test::findFirst<Expr>(
      Ctx,
      expr(anyOf(
          arraySubscriptExpr(
              hasBase(expr(ignoringParenImpCasts(Ref)).bind("p"))),
          unaryOperator(
              hasOperatorName("*"),
              hasUnaryOperand(expr(ignoringParenImpCasts(Ref)).bind("p"))))),
      "p");
  EXPECT_TRUE(Kernel && Pointer)
      << "test code lacks kernel k or a read of " << Name;
  if (!Kernel || !Pointer)
    return false;
  return GlobalPointerProvenance(*Kernel).isGlobal(Pointer);
}

TEST(GlobalPointerProvenance, KernelPointerParameterIsGlobal) {
  EXPECT_TRUE(isGlobalPointer(
      "__global__ void k(const float *x, float *y) { y[0] = x[1]; }", "x"));
}

TEST(GlobalPointerProvenance, ArithmeticAndCastsKeepProvenance) {
  EXPECT_TRUE(isGlobalPointer("__global__ void k(const float *x, float *y) {"
                              "  const float4 *q = (const float4 *)(x + 4);"
                              "  const float4 *r = q + 1;"
                              "  y[0] = r[0].x; }",
                              "r"));
  EXPECT_TRUE(isGlobalPointer("__global__ void k(float *x, int n) {"
                              "  float *p = &x[n]; p++; x[0] = *p; }",
                              "p"));
}

TEST(GlobalPointerProvenance, SharedAndLocalArraysAreNotGlobal) {
  EXPECT_FALSE(isGlobalPointer("__global__ void k(float *y) {"
                               "  __shared__ float tile[32];"
                               "  y[0] = tile[threadIdx.x]; }",
                               "tile"));
  EXPECT_FALSE(isGlobalPointer("__global__ void k(float *y) {"
                               "  float local[4] = {1, 2, 3, 4};"
                               "  float *p = local; y[0] = p[1]; }",
                               "p"));
}

TEST(GlobalPointerProvenance, ReassignmentFromSharedPoisons) {
  EXPECT_FALSE(isGlobalPointer("__global__ void k(float *x, int c) {"
                               "  __shared__ float s[8];"
                               "  float *p = x; if (c) p = s;"
                               "  x[1] = p[0]; }",
                               "p"));
  EXPECT_TRUE(isGlobalPointer("__global__ void k(float *x, float *y, int c) {"
                              "  float *p = x; if (c) p = y + 1;"
                              "  x[1] = p[0]; }",
                              "p"));
}

TEST(GlobalPointerProvenance, EscapedOrLoadedPointersAreUnknown) {
  EXPECT_FALSE(isGlobalPointer("__device__ void f(float **);"
                               "__global__ void k(float *x) {"
                               "  float *p = x; f(&p); x[0] = p[0]; }",
                               "p"));
  EXPECT_FALSE(isGlobalPointer("__global__ void k(float **rows, float *y) {"
                               "  float *row = rows[0]; y[0] = row[1]; }",
                               "row"));
}

TEST(GlobalPointerProvenance, VolatilePointeeIsLeftAlone) {
  EXPECT_FALSE(isGlobalPointer(
      "__global__ void k(volatile int *flag, int *y) { y[0] = *flag; }",
      "flag"));
}

} // namespace
} // namespace smpart
