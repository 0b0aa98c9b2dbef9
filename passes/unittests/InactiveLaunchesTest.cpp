#include "analysis/InactiveLaunches.h"

#include <gtest/gtest.h>

#include <map>

namespace smpart {
namespace {

TEST(InactiveLaunches, FindsLaunchesInSkippedText) {
  const auto Found = InactiveLaunches::scan("  k<<<1, 2>>>(p);\n"
                                            "  fill<int> <<<g, b>>>(q);\n"
                                            "  x << 2; a < b; y<<3;\n"
                                            "  spaced << <1, 2 >> >(r);\n",
                                            "f.cu", 10, 1);
  std::set<std::string> Names;
  for (const SkippedLaunch &L : Found)
    if (L.Launch)
      Names.insert(L.Kernel);
  EXPECT_EQ(Names, (std::set<std::string>{"k", "fill", "spaced"}));
  for (const SkippedLaunch &L : Found) {
    EXPECT_EQ(L.Where.File, "f.cu");
    if (L.Kernel == "k") {
      EXPECT_EQ(L.Where.Line, 10u);
      EXPECT_EQ(L.Where.Col, 3u);
    }
    if (L.Kernel == "fill") {
      EXPECT_EQ(L.Where.Line, 11u);
    }
  }
}

TEST(InactiveLaunches, FindsNamesOutsideCommentsAndLiterals) {
  const auto Found = InactiveLaunches::scan(
      "  params.func = (void *)k; // old_k<<<1, 1>>>\n"
      "  /* multi\n line k2 */ puts(\"k3 \\\" k4\"); c = 'k';\n"
      "  obj.member(); p->field; ns::qualified;\n",
      "f.cu", 1, 1);
  std::map<std::string, SkippedLaunch> ByName;
  for (const SkippedLaunch &L : Found)
    ByName.insert({L.Kernel, L});
  for (const char *Absent : {"old_k", "k2", "k3", "k4", "member", "field"})
    EXPECT_FALSE(ByName.count(Absent)) << Absent;
  ASSERT_TRUE(ByName.count("k"));
  EXPECT_FALSE(ByName.at("k").Launch);
  EXPECT_EQ(ByName.at("k").Where.Col, 25u);
  ASSERT_TRUE(ByName.count("puts"));
  EXPECT_EQ(ByName.at("puts").Where.Line, 3u);
  EXPECT_TRUE(ByName.count("qualified"));
  EXPECT_TRUE(ByName.count("obj"));
}

TEST(InactiveLaunches, RefusesOnlyWhatBothParsesSkipped) {
  FileFacts Facts;
  FunctionFacts &K = Facts.function("k");
  K.Name = "ns::k";
  K.IsKernel = true;
  FunctionFacts &Other = Facts.function("other");
  Other.Name = "other";
  Other.IsKernel = true;
  const SkippedLaunch L{"k", Place{"f.cu", 3, 1}};
  const SkippedLaunch M{"other", Place{"f.cu", 4, 1}};
  InactiveLaunches::refuse({L, M}, {L}, Facts);
  EXPECT_EQ(Facts.Functions.at("k").Hazards.size(), 1u);
  EXPECT_TRUE(Facts.Functions.at("other").Hazards.empty());
}

} // namespace
} // namespace smpart
