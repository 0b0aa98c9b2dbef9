#include "rewrite/LaunchSyntax.h"

#include "AstTestSupport.h"

#include <gtest/gtest.h>

using namespace clang;
using namespace clang::ast_matchers;

namespace smpart {
namespace {

struct Parsed {
  std::optional<LaunchSyntax> S;
  std::string Text; ///< the file text, for checking offsets
  const SourceManager *SM = nullptr;
  std::unique_ptr<ASTUnit> AST;

  std::string at(SourceLocation L, unsigned N) const {
    return Text.substr(SM->getFileOffset(L), N);
  }
};

Parsed parse(const std::string &Code) {
  Parsed P;
  P.AST = test::buildCudaAst(Code);
  ASTContext &Ctx = P.AST->getASTContext();
  const auto *Call = test::findFirst<CUDAKernelCallExpr>(
      Ctx, cudaKernelCallExpr().bind("c"), "c");
  EXPECT_TRUE(Call);
  P.SM = &Ctx.getSourceManager();
  P.Text = P.SM->getBufferData(P.SM->getMainFileID()).str();
  if (Call)
    P.S = parseLaunch(*Call, *P.SM, Ctx.getLangOpts());
  return P;
}

TEST(LaunchSyntax, FindsEveryPieceOfAPlainLaunch) {
  Parsed P = parse("__global__ void k(int);\n"
                   "void h() { k <<< 4, 128 >>> ( 7 ); }");
  ASSERT_TRUE(P.S);
  EXPECT_EQ(P.S->CalleeText, "k");
  EXPECT_EQ(P.at(P.S->ConfigOpen, 3), "<<<");
  EXPECT_EQ(P.at(P.S->ConfigClose, 3), ">>>");
  EXPECT_EQ(P.at(P.S->ArgsOpen, 1), "(");
  EXPECT_EQ(P.at(P.S->ArgsClose, 1), ")");
  EXPECT_EQ(P.S->WrittenConfigArgs, 2u);
  EXPECT_TRUE(P.S->MacroName.empty());
}

TEST(LaunchSyntax, CountsWrittenConfigurationArguments) {
  Parsed P = parse("__global__ void k();\n"
                   "void h(cudaStream_t s) { k<<<1, 2, 64, s>>>(); }");
  ASSERT_TRUE(P.S);
  EXPECT_EQ(P.S->WrittenConfigArgs, 4u);
}

TEST(LaunchSyntax, KeepsQualifiedTemplateCallee) {
  Parsed P = parse("namespace ns { template <class T> __global__ void k(T); }\n"
                   "void h() { ns::k<float><<<1, 1>>>(2.0f); }");
  ASSERT_TRUE(P.S);
  EXPECT_EQ(P.S->CalleeText, "ns::k<float>");
}

TEST(LaunchSyntax, MacroBodyLaunchEditsTheDefinition) {
  Parsed P = parse("#define LAUNCH(kern, ...) kern<<<1, 32>>>(__VA_ARGS__)\n"
                   "__global__ void k(int);\n"
                   "void h() { LAUNCH(k, 3); }");
  ASSERT_TRUE(P.S);
  EXPECT_EQ(P.S->MacroName, "LAUNCH");
  // The callee is the macro parameter in the body, not one argument.
  EXPECT_EQ(P.S->CalleeText, "kern");
}

TEST(LaunchSyntax, LaunchInsideMacroArgumentIsPlainText) {
  Parsed P = parse("#define CHECK(...) __VA_ARGS__\n"
                   "__global__ void k(int);\n"
                   "void h() { CHECK(k<<<1, 32>>>(3)); }");
  ASSERT_TRUE(P.S);
  EXPECT_TRUE(P.S->MacroName.empty());
  EXPECT_EQ(P.S->CalleeText, "k");
}

} // namespace
} // namespace smpart
