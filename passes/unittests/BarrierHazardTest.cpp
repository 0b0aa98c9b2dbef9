#include "analysis/BarrierHazard.h"

#include "AstTestSupport.h"

#include <gtest/gtest.h>

using namespace clang;
using namespace clang::ast_matchers;

namespace smpart {
namespace {

std::optional<BarrierAfterReturn> hazardIn(const std::string &Code,
                                           unsigned &ReturnLine,
                                           unsigned &BarrierLine) {
  auto AST = test::buildCudaAst(Code);
  EXPECT_TRUE(AST);
  ASTContext &Ctx = AST->getASTContext();
  const auto *Kernel = test::findFirst<FunctionDecl>(
      Ctx, functionDecl(hasName("k"), isDefinition()).bind("k"), "k");
  EXPECT_TRUE(Kernel);
  auto H = findBarrierAfterReturn(*Kernel, Ctx);
  if (H) {
    // Line 1 is the stub include.
    const SourceManager &SM = Ctx.getSourceManager();
    ReturnLine = SM.getSpellingLineNumber(H->Return->getBeginLoc()) - 1;
    BarrierLine = SM.getSpellingLineNumber(H->Barrier->getBeginLoc()) - 1;
  }
  return H;
}

TEST(BarrierHazard, BarrierAfterGuardReturnIsFound) {
  unsigned R = 0, B = 0;
  EXPECT_TRUE(hazardIn("__global__ void k(float *p, int n) {\n"
                       "  if (threadIdx.x >= n) return;\n"
                       "  __syncthreads();\n"
                       "  p[threadIdx.x] = 0; }",
                       R, B));
  EXPECT_EQ(R, 2u);
  EXPECT_EQ(B, 3u);
}

TEST(BarrierHazard, BarrierBeforeTheReturnIsFine) {
  unsigned R = 0, B = 0;
  EXPECT_FALSE(hazardIn("__global__ void k(float *p, int n) {\n"
                        "  __syncthreads();\n"
                        "  if (threadIdx.x >= n) return;\n"
                        "  p[threadIdx.x] = 0; }",
                        R, B));
}

TEST(BarrierHazard, LoopBackEdgeReachesEarlierBarrier) {
  unsigned R = 0, B = 0;
  EXPECT_TRUE(hazardIn("__global__ void k(float *p, int n) {\n"
                       "  for (int i = 0; i < n; ++i) {\n"
                       "    __syncthreads();\n"
                       "    if (p[i] < 0) return;\n"
                       "  } }",
                       R, B));
  EXPECT_EQ(R, 4u);
  EXPECT_EQ(B, 3u);
}

TEST(BarrierHazard, UniformLoopBeforeTheReturnIsFine) {
  // A tree reduction: the loop bound depends on blockDim only, so the whole
  // CTA leaves the loop together; the divergent return has no barrier after.
  unsigned R = 0, B = 0;
  EXPECT_FALSE(hazardIn("__global__ void k(float *p, int n) {\n"
                        "  int t = threadIdx.x;\n"
                        "  for (int s = blockDim.x / 2; s > 0; s >>= 1) {\n"
                        "    if (t < s) p[t] += p[t + s];\n"
                        "    __syncthreads();\n"
                        "  }\n"
                        "  if (t != 0) return;\n"
                        "  p[n] = p[0]; }",
                        R, B));
}

TEST(BarrierHazard, LoopBoundReadFromMemoryIsDivergent) {
  unsigned R = 0, B = 0;
  EXPECT_TRUE(hazardIn("__global__ void k(float *p, int *len) {\n"
                       "  int m = len[threadIdx.x];\n"
                       "  for (int i = 0; i < m; ++i) {\n"
                       "    __syncthreads();\n"
                       "  }\n"
                       "  if (threadIdx.x) return;\n"
                       "  p[0] = 1; }",
                       R, B));
}

TEST(BarrierHazard, NoReturnOrNoBarrierMeansNoHazard) {
  unsigned R = 0, B = 0;
  EXPECT_FALSE(hazardIn("__global__ void k(float *p, int n) {\n"
                        "  if (threadIdx.x < n) { __syncthreads(); p[0] = 1; }"
                        " }",
                        R, B));
  EXPECT_FALSE(hazardIn("__global__ void k(float *p, int n) {\n"
                        "  if (threadIdx.x >= n) return;\n"
                        "  p[0] = 1; }",
                        R, B));
}

TEST(BarrierHazard, CooperativeGroupsBlockSyncCounts) {
  unsigned R = 0, B = 0;
  EXPECT_TRUE(hazardIn("__global__ void k(float *p, int n) {\n"
                       "  auto block = cooperative_groups::this_thread_block();\n"
                       "  if (threadIdx.x >= n) return;\n"
                       "  block.sync(); }",
                       R, B));
}

} // namespace
} // namespace smpart
