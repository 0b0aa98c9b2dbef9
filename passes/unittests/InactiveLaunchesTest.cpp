#include "analysis/InactiveLaunches.h"

#include <gtest/gtest.h>

namespace smpart {
namespace {

TEST(InactiveLaunches, FindsLaunchesInSkippedText) {
  const auto Found = InactiveLaunches::scan(
      "  k<<<1, 2>>>(p);\n"
      "  fill<int> <<<g, b>>>(q);\n"
      "  x << 2; a < b; y<<3;\n"
      "  spaced << <1, 2 >> >(r);\n",
      "f.cu", 10, 1);
  std::set<std::string> Names;
  for (const SkippedLaunch &L : Found)
    Names.insert(L.Kernel);
  EXPECT_EQ(Names, (std::set<std::string>{"k", "fill", "spaced"}));
  for (const SkippedLaunch &L : Found) {
    EXPECT_EQ(L.Where.File, "f.cu");
    if (L.Kernel == "k") {
      EXPECT_EQ(L.Where.Line, 10u);
      EXPECT_EQ(L.Where.Col, 3u);
    }
    if (L.Kernel == "fill")
      EXPECT_EQ(L.Where.Line, 11u);
  }
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
