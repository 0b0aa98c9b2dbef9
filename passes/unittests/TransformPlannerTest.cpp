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
    L.Edits.insert({"f.cu", 900, 3, "smpart::launchRewritten(..."});
    Facts.Launches.push_back(L);
  }
  TransformPlan Plan = TransformPlanner(Facts, nullptr, nullptr).plan();
  EXPECT_EQ(statusOf(Plan, "a"), KernelStatus::Refused);
}

const KernelDecision &decisionOf(const TransformPlan &Plan,
                                 const std::string &Name) {
  for (const KernelDecision &D : Plan.Kernels)
    if (D.Kernel->Name == Name)
      return D;
  static const KernelDecision None;
  ADD_FAILURE() << "no decision for " << Name;
  return None;
}

/// A launch of `Kernel` with both closures, and the original's copy.
void keepable(FileFacts &Facts, const std::string &Kernel, unsigned Offset) {
  FunctionFacts &F = Facts.function(Kernel);
  F.WantsOriginal = true;
  F.OriginalEdits.insert({"f.cu", Offset, 0, "original " + Kernel});
  LaunchFacts L;
  L.KernelKey = Kernel;
  L.Edits.insert({"f.cu", Offset + 900, 1, "args"});
  L.WithOriginal.insert({"f.cu", Offset + 800, 3, "closure with original"});
  L.WithoutOriginal.insert({"f.cu", Offset + 800, 3, "closure"});
  Facts.Launches.push_back(L);
}

TEST(TransformPlanner, WantedOriginalIsKeptWithTheClosureThatRunsIt) {
  FileFacts Facts;
  kernel(Facts, "a", 1);
  keepable(Facts, "a", 10);
  TransformPlan Plan = TransformPlanner(Facts, nullptr, nullptr).plan();
  EXPECT_TRUE(decisionOf(Plan, "a").KeepsOriginal);
  const std::set<Edit> &E = Plan.EditsByFile["f.cu"];
  EXPECT_TRUE(E.count({"f.cu", 10, 0, "original a"}));
  EXPECT_TRUE(E.count({"f.cu", 810, 3, "closure with original"}));
  EXPECT_FALSE(E.count({"f.cu", 810, 3, "closure"}));
  EXPECT_TRUE(E.count({"f.cu", 910, 1, "args"}));
}

TEST(TransformPlanner, WantedOriginalReachingBlockIdIsDroppedNotRefused) {
  FileFacts Facts;
  kernel(Facts, "a", 1).Callees.insert("helper");
  keepable(Facts, "a", 10);
  FunctionFacts &Helper = Facts.function("helper");
  Helper.Name = "helper";
  Helper.ReadsBlockId = true;
  // Uncopyable originals are dropped the same way.
  kernel(Facts, "b", 2).OriginalUncopyable = true;
  keepable(Facts, "b", 20);
  TransformPlan Plan = TransformPlanner(Facts, nullptr, nullptr).plan();
  for (const char *K : {"a", "b"}) {
    EXPECT_EQ(statusOf(Plan, K), KernelStatus::Transformed) << K;
    EXPECT_FALSE(decisionOf(Plan, K).KeepsOriginal) << K;
  }
  const std::set<Edit> &E = Plan.EditsByFile["f.cu"];
  EXPECT_FALSE(E.count({"f.cu", 10, 0, "original a"}));
  EXPECT_TRUE(E.count({"f.cu", 810, 3, "closure"}));
  EXPECT_FALSE(E.count({"f.cu", 810, 3, "closure with original"}));
  EXPECT_TRUE(E.count({"f.cu", 820, 3, "closure"}));
}

TEST(TransformPlanner, NeededOriginalReachingBlockIdRefusesKernel) {
  FileFacts Facts;
  FunctionFacts &A = kernel(Facts, "a", 1);
  A.Callees.insert("helper");
  A.NeedsOriginal = true;
  FunctionFacts &Helper = Facts.function("helper");
  Helper.Name = "helper";
  Helper.ReadsBlockId = true;
  TransformPlan Plan = TransformPlanner(Facts, nullptr, nullptr).plan();
  EXPECT_EQ(statusOf(Plan, "a"), KernelStatus::Refused);
}

/// The prologue edit of kernel \p Name (at its body's `{`).
std::string prologueOf(const TransformPlan &Plan, unsigned Line) {
  for (const auto &[File, Edits] : Plan.EditsByFile)
    for (const Edit &E : Edits)
      if (E.Offset == Line * 100 + 1)
        return E.Text;
  return {};
}

TEST(TransformPlanner, CalleesOutsideTheFilePublishTheLogicalBlock) {
  FileFacts Facts;
  // Defined in another translation unit, reached through a helper.
  kernel(Facts, "a", 1).Callees.insert("helper");
  FunctionFacts &Helper = Facts.function("helper");
  Helper.Name = "helper";
  Helper.UnseenCallees["ext"] = {"f.cu", 3, 5};
  // A header an earlier run rewrote.
  kernel(Facts, "b", 2).ReadsLogicalBlockOpaquely = true;
  kernel(Facts, "c", 3);
  TransformPlan Plan = TransformPlanner(Facts, nullptr, nullptr).plan();
  for (const char *K : {"a", "b", "c"})
    EXPECT_EQ(statusOf(Plan, K), KernelStatus::Transformed) << K;
  EXPECT_NE(prologueOf(Plan, 1).find("PublishingCta"), std::string::npos);
  EXPECT_NE(prologueOf(Plan, 2).find("PublishingCta"), std::string::npos);
  EXPECT_NE(prologueOf(Plan, 3).find("detail::Cta "), std::string::npos);
  // Only the assumption about another file is a warning.
  ASSERT_EQ(decisionOf(Plan, "a").Warnings.size(), 1u);
  EXPECT_NE(decisionOf(Plan, "a").Warnings[0].Reason.find("'ext'"),
            std::string::npos);
  EXPECT_EQ(decisionOf(Plan, "a").Warnings[0].Where.Line, 3u);
  EXPECT_TRUE(decisionOf(Plan, "b").Warnings.empty());
  EXPECT_TRUE(decisionOf(Plan, "c").Warnings.empty());
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

// A loop "for (...) k(a[i]);" on line 2 from column 3, with a tagged load
// of a[i] as two insertions, and a comment after it.
struct LoopFixture {
  std::string Text = "{\n  for (int i = 0; ; ) k(a[i]); // end\n}\n";
  TagSwitchedText Loop;
  std::set<Edit> Edits;
  LoopFixture() {
    Loop.File = "f.cu";
    Loop.LineFile = "f.cu";
    Loop.Begin = 4;
    Loop.End = static_cast<unsigned>(Text.find(");")) + 2;
    Loop.Line = Loop.EndLine = 2;
    Loop.Col = 3;
    Loop.EndCol = Loop.End - 2 + 1;
    const unsigned A = static_cast<unsigned>(Text.find("a[i]"));
    Edits.insert(Edit{"f.cu", A, 0, "smpart::load(&"});
    Edits.insert(
        Edit{"f.cu", A + 4, 0, std::string(", ") + BypassTagExpr + ")"});
  }
};

TEST(TransformPlanner, UnswitchedLoopHasOneCopyPerTagWithItsEdits) {
  LoopFixture F;
  F.Edits.insert(Edit{"f.cu", 0, 0, "/* before */"}); // outside: stays
  TransformPlanner::unswitch(F.Loop, F.Text, F.Edits);
  ASSERT_EQ(F.Edits.size(), 2u);
  const std::string Text = std::prev(F.Edits.end())->Text;
  EXPECT_EQ(std::prev(F.Edits.end())->Offset, F.Loop.Begin);
  EXPECT_EQ(std::prev(F.Edits.end())->Length, F.Loop.End - F.Loop.Begin);
  EXPECT_EQ(Text, "{ // smpart: once per bypass tag, so that its loads' tag "
                  "is a constant\n"
                  "  if (smpart_cta.bypass()) {\n"
                  "#line 2 \"f.cu\"\n"
                  "  for (int i = 0; ; ) k(smpart::load(&a[i], true));\n"
                  "  } else {\n"
                  "#line 2 \"f.cu\"\n"
                  "  for (int i = 0; ; ) k(smpart::load(&a[i], false));\n"
                  "  }\n"
                  "  }\n"
                  "#line 2 \"f.cu\"\n" +
                      std::string(F.Loop.EndCol - 1, ' '));
}

TEST(TransformPlanner, UnswitchLeavesAnEditAcrossTheLoopAlone) {
  LoopFixture F;
  F.Edits.insert(Edit{"f.cu", F.Loop.End - 3, 6, "x"});
  const std::set<Edit> Before = F.Edits;
  TransformPlanner::unswitch(F.Loop, F.Text, F.Edits);
  ASSERT_EQ(F.Edits.size(), Before.size());
  for (auto A = F.Edits.begin(), B = Before.begin(); A != F.Edits.end();
       ++A, ++B)
    EXPECT_EQ(A->Text, B->Text);
}

} // namespace
} // namespace smpart
