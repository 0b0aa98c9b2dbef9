#include "pipeline/TransformPlanner.h"

#include <gtest/gtest.h>

namespace smpart {
namespace {

FunctionFacts &kernel(FileFacts &Facts, const std::string &Name,
                      unsigned Line) {
  FunctionFacts &F = Facts.function(Name);
  F.Name = Name;
  F.IsKernel = true;
  F.Where = {"f.cu", Line, 1};
  F.Body.Valid = true;
  F.Body.File = "f.cu";
  F.Body.OpenOffset = Line * 100;
  F.Body.CloseOffset = Line * 100 + 50;
  return F;
}

KernelStatus statusOf(const TransformPlan &Plan, const std::string &Name) {
  for (const KernelDecision &D : Plan.Kernels)
    if (D.Kernel->Name == Name)
      return D.Status;
  ADD_FAILURE() << "no decision for " << Name;
  return KernelStatus::Excluded;
}

TEST(TransformPlanner, HazardInReachedDeviceFunctionRefusesKernel) {
  FileFacts Facts;
  kernel(Facts, "a", 1).Callees.insert("helper");
  FunctionFacts &Helper = Facts.function("helper");
  Helper.Name = "helper";
  Helper.Hazards.insert({"inline asm reads %ctaid/%nctaid", {}, {}});
  kernel(Facts, "b", 2);
  TransformPlan Plan = TransformPlanner(Facts, nullptr, nullptr).plan();
  EXPECT_EQ(statusOf(Plan, "a"), KernelStatus::Refused);
  EXPECT_EQ(statusOf(Plan, "b"), KernelStatus::Transformed);
}

TEST(TransformPlanner, SharedBlockIdHelperFollowsTheUntransformedCaller) {
  FileFacts Facts;
  kernel(Facts, "a", 1).Callees.insert("helper");
  kernel(Facts, "b", 2).Callees.insert("helper");
  FunctionFacts &Helper = Facts.function("helper");
  Helper.Name = "helper";
  Helper.ReadsBlockId = true;
  Helper.Edits.insert({"f.cu", 5, 8, "smpart::blockIdx()"});
  llvm::Regex ExcludeB("^b$");
  TransformPlan Plan = TransformPlanner(Facts, nullptr, &ExcludeB).plan();
  EXPECT_EQ(statusOf(Plan, "b"), KernelStatus::Excluded);
  EXPECT_EQ(statusOf(Plan, "a"), KernelStatus::Refused);
  // Neither the helper nor any kernel is edited.
  EXPECT_TRUE(Plan.EditsByFile["f.cu"].empty());
}

TEST(TransformPlanner, MacroLaunchOfMixedKernelsRefusesAll) {
  FileFacts Facts;
  kernel(Facts, "a", 1);
  kernel(Facts, "b", 2).Hazards.insert({"grid-wide synchronisation", {}, {}});
  for (const char *K : {"a", "b"}) {
    LaunchFacts L;
    L.KernelKey = K;
    L.MacroName = "LAUNCH";
    L.Edits.insert({"f.cu", 900, 3, "smpart::launch(..."});
    Facts.Launches.push_back(L);
  }
  TransformPlan Plan = TransformPlanner(Facts, nullptr, nullptr).plan();
  EXPECT_EQ(statusOf(Plan, "a"), KernelStatus::Refused);
}

TEST(TransformPlanner, PrologueShadowsOnlyWhatTheBodyUses) {
  KernelBody Body;
  Body.LineFile = "k.cu";
  Body.OpenLine = 7;
  Body.UsesGridDim = true;
  std::string P = TransformPlanner::prologue(Body, false);
  EXPECT_NE(P.find("smpart::detail::Cta smpart_cta"), std::string::npos);
  EXPECT_NE(TransformPlanner::prologue(Body, true)
                .find("smpart::detail::PublishingCta smpart_cta"),
            std::string::npos);
  EXPECT_NE(P.find("const dim3 gridDim"), std::string::npos);
  EXPECT_EQ(P.find("const uint3 blockIdx"), std::string::npos);
  EXPECT_NE(P.find("#line 7 \"k.cu\""), std::string::npos);
  EXPECT_EQ(TransformPlanner::epilogue(Body).find("smpart_next_block"),
            std::string::npos);
  Body.HasReturn = true;
  EXPECT_NE(TransformPlanner::epilogue(Body).find("smpart_next_block:;"),
            std::string::npos);
}

} // namespace
} // namespace smpart
