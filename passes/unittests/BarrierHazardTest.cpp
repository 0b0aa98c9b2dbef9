#include "analysis/BarrierHazard.h"

#include "AstTestSupport.h"

#include <gtest/gtest.h>

using namespace clang;
using namespace clang::ast_matchers;

namespace smpart {
namespace {

std::optional<BarrierAfterReturn>
hazardIn(const std::string &Code, unsigned &ReturnLine, unsigned &BarrierLine) {
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

TEST(BarrierHazard, LocalsWrittenOutOfSightAreThreadDependent) {
  // The thread index reaches the branch through a reference parameter, an
  // asm output, a member of a local struct, a reference to the local.
  for (const char *Guard :
       {"int i; get_tid(i);",
        "int i; asm(\"mov.u32 %0, %%laneid;\" : "
        "\"=r\"(i));",
        "struct { int v; } s; s.v = threadIdx.x; int i = s.v;",
        "int i = 0; int &r = i; r = threadIdx.x;"}) {
    unsigned R = 0, B = 0;
    EXPECT_TRUE(hazardIn(std::string("__device__ void get_tid(int &x) { x = "
                                     "threadIdx.x; }\n"
                                     "__global__ void k(float *p, int n) {\n"
                                     "  ") +
                             Guard +
                             "\n"
                             "  if (i >= n) return;\n"
                             "  __syncthreads();\n"
                             "  p[i] = 0; }",
                         R, B))
        << Guard;
    EXPECT_EQ(R, 4u) << Guard;
    EXPECT_EQ(B, 5u) << Guard;
  }
}

TEST(BarrierHazard, ALocalPassedByConstReferenceStaysUniform) {
  unsigned R = 0, B = 0;
  EXPECT_FALSE(hazardIn("__device__ int twice(const int &x) { return 2 * x; }\n"
                        "__global__ void k(float *p, int n) {\n"
                        "  int m = n; p[twice(m)] = 0;\n"
                        "  if (m > 4) return;\n"
                        "  __syncthreads();\n"
                        "  p[threadIdx.x] = 0; }",
                        R, B));
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
  EXPECT_TRUE(
      hazardIn("__global__ void k(float *p, int n) {\n"
               "  auto block = cooperative_groups::this_thread_block();\n"
               "  if (threadIdx.x >= n) return;\n"
               "  block.sync(); }",
               R, B));
}

TEST(BarrierHazard, AsmCollectiveKinds) {
  EXPECT_EQ(asmCollective("bar.sync 0;"), Collective::Block);
  EXPECT_EQ(asmCollective("barrier.sync 1, 64;"), Collective::Block);
  EXPECT_EQ(asmCollective("barrier.cta.sync.aligned 0;"), Collective::Block);
  EXPECT_EQ(asmCollective("bar.red.popc.u32 %0, 0, %1;"), Collective::Block);
  EXPECT_EQ(asmCollective("bar.warp.sync -1;"), Collective::Warp);
  EXPECT_EQ(asmCollective("shfl.sync.bfly.b32 %0, %1, 1, 31, -1;"),
            Collective::Warp);
  EXPECT_EQ(asmCollective("vote.sync.ballot.b32 %0, %1, -1;"),
            Collective::Warp);
  EXPECT_EQ(asmCollective("mov.u32 %0, %%laneid;"), Collective::None);
  EXPECT_EQ(asmCollective("ld.global.nc.f32 %0, [%1];"), Collective::None);
  EXPECT_EQ(asmCollective("mbar.sync_like_name"), Collective::None);
}

TEST(BarrierHazard, CallThroughPointerCountsAsBarrier) {
  unsigned R = 0, B = 0;
  EXPECT_TRUE(
      hazardIn("__global__ void k(float *p, int n, void (*f)(float *)) {\n"
               "  if (threadIdx.x >= n) return;\n"
               "  f(p); }",
               R, B));
  EXPECT_EQ(B, 3u);
}

TEST(BarrierHazard, AsmBarrierInCalleeIsFound) {
  unsigned R = 0, B = 0;
  EXPECT_TRUE(
      hazardIn("__device__ void bar() { asm volatile(\"bar.sync 0;\"); }\n"
               "__global__ void k(float *p, int n) {\n"
               "  if (threadIdx.x >= n) return;\n"
               "  bar(); }",
               R, B));
  EXPECT_EQ(R, 3u);
  EXPECT_EQ(B, 4u);
}

} // namespace
} // namespace smpart
