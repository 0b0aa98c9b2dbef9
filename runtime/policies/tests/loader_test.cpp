#include "test_support.hpp"

#include <gtest/gtest.h>

using namespace smpart::policy;
using namespace smpart::policy::test;

namespace {
std::string parseError(const std::string &Text) {
  return errorOf([&] { parseProfiles(Text, "profiles.json"); });
}
std::string kernelsError(const json &Kernels, int Sms = 132) {
  json Doc = {
      {"schema", "smpart.profiles/1"}, {"gpu", gpu(Sms)}, {"kernels", Kernels}};
  return parseError(Doc.dump());
}
} // namespace

TEST(Loader, ReadsTheExamples) {
  ProfileSet S = example("compute_memory_pair.json");
  ASSERT_EQ(S.kernels.size(), 2u);
  EXPECT_EQ(S.gpu.num_sms, 132);
  EXPECT_EQ(S.kernels[1].name, "stream_triad");
  EXPECT_EQ(S.kernels[1].by_sms.size(), 7u);
  EXPECT_EQ(S.kernels[0].priority, Priority::High);
  EXPECT_DOUBLE_EQ(*S.gpu.hsm.c1, 0.4);
  EXPECT_NO_THROW(example("memory_memory_pair.json"));
  EXPECT_NO_THROW(example("compute_compute_pair.json"));
}

TEST(Loader, MalformedJsonNamesLineAndColumn) {
  std::string E =
      parseError("{\n  \"schema\": \"smpart.profiles/1\",\n  \"gpu\": {,\n}");
  EXPECT_NE(
      E.find("profiles.json: (root): malformed JSON at line 3, column 11"),
      std::string::npos)
      << E;
}

TEST(Loader, WrongSchema) {
  EXPECT_EQ(
      parseError(
          R"({"schema": "smpart.plan/1", "gpu": {"num_sms": 4}, "kernels": []})"),
      "profiles.json: schema: expected \"smpart.profiles/1\", got "
      "\"smpart.plan/1\"");
  EXPECT_EQ(parseError("[]"),
            "profiles.json: (root): expected an object, got array");
  EXPECT_EQ(parseError(R"({"gpu": {}})"),
            "profiles.json: schema: missing required field");
}

TEST(Loader, NegativeSmCountNamesThePath) {
  json K = json::array(
      {{{"name", "a"}},
       {{"name", "b"},
        {"isolated",
         {{"by_sms", json::array({{{"sms", 4}, {"time_ms", 1.0}},
                                  {{"sms", 8}, {"time_ms", 0.5}},
                                  {{"sms", -2}, {"time_ms", 0.4}}})}}}}});
  EXPECT_EQ(kernelsError(K),
            "profiles.json: kernels[1].isolated.by_sms[2].sms: "
            "expected a positive integer (an SM count) in [1, 132]");
}

TEST(Loader, NonMonotoneSmCounts) {
  json K = json::array(
      {{{"name", "a"},
        {"isolated",
         {{"by_sms", json::array({{{"sms", 8}, {"time_ms", 1.0}},
                                  {{"sms", 8}, {"time_ms", 0.5}}})}}}}});
  EXPECT_EQ(kernelsError(K),
            "profiles.json: kernels[0].isolated.by_sms[1].sms: expected SM "
            "counts in strictly increasing order (8 after 8)");
}

TEST(Loader, MoreKernelsThanSms) {
  json K = json::array({{{"name", "a"}}, {{"name", "b"}}, {{"name", "c"}}});
  EXPECT_EQ(kernelsError(K, 2),
            "profiles.json: kernels: expected at most 2 kernels "
            "(gpu.num_sms; each needs an SM), got 3");
}

TEST(Loader, TypeAndRangeErrors) {
  EXPECT_EQ(kernelsError(json::array({{{"name", 3}}})),
            "profiles.json: kernels[0].name: expected a string, got number");
  EXPECT_EQ(kernelsError(json::array({{{"name", "a"}}, {{"name", "a"}}})),
            "profiles.json: kernels[1].name: expected a unique kernel name, "
            "\"a\" repeats");
  EXPECT_EQ(
      kernelsError(json::array({{{"name", "a"}, {"metrics", {{"rbh", 1.5}}}}})),
      "profiles.json: kernels[0].metrics.rbh: expected a fraction in [0, 1]");
  EXPECT_EQ(kernelsError(json::array(
                {{{"name", "a"}, {"metrics", {{"type", "Sideways"}}}}})),
            "profiles.json: kernels[0].metrics.type: expected \"Up\", "
            "\"Optimal\" or \"Down\"");
  EXPECT_EQ(
      kernelsError(json::array(
          {{{"name", "a"}, {"total_blocks", 10}, {"executed_blocks", 11}}})),
      "profiles.json: kernels[0].executed_blocks: expected a non-negative "
      "integer "
      "<= total_blocks in [0, 10]");
  EXPECT_EQ(kernelsError(
                json::array({{{"name", "a"}, {"block", {{"threads", 2.5}}}}})),
            "profiles.json: kernels[0].block.threads: expected a positive "
            "integer in [1, 1048576]");
  EXPECT_EQ(kernelsError(json::array()),
            "profiles.json: kernels: expected at least one kernel");
}

TEST(Loader, DeepNestingIsRefusedNotRecursed) {
  std::string Deep(100000, '[');
  EXPECT_EQ(
      parseError(Deep),
      "profiles.json: (root): expected JSON nested at most 64 levels deep");
}

TEST(Loader, MissingFieldAPolicyNeeds) {
  ProfileSet S = example("compute_compute_pair.json");
  EXPECT_EQ(
      errorOf([&] { decide("hsm-fair", S); }),
      std::string(SMPART_POLICY_EXAMPLES) +
          "/compute_compute_pair.json: kernels[0].shared: missing; required by "
          "policy hsm-fair");
  ProfileSet T = profiles(gpu(8), json::array({{{"name", "a"}}}));
  EXPECT_EQ(errorOf([&] { decide("greedy", T); }),
            "test.json: kernels[0].block: missing; required by policy greedy");
  EXPECT_EQ(errorOf([&] { decide("cd-search", T); }),
            "test.json: kernels[0].metrics.llc_apki: missing; required by "
            "policy cd-search");
  EXPECT_EQ(errorOf([&] { decide("power-aware", T); }),
            "test.json: kernels[0].isolated.by_sms: missing; required by "
            "policy power-aware");
}

TEST(Loader, MissingFile) {
  EXPECT_EQ(errorOf([] { loadProfiles("/nonexistent/p.json"); }),
            "/nonexistent/p.json: (file): expected a readable file");
}

TEST(PlanIo, RoundTrips) {
  Plan P = decide("cd-search", example("compute_memory_pair.json"));
  std::string Text = planToJson(P).dump();
  Plan Q = parsePlan(Text, "plan.json");
  EXPECT_EQ(planToJson(Q).dump(), Text);
  EXPECT_EQ(errorOf([] {
              parsePlan(
                  R"({"schema": "smpart.plan/1", "kernels": [{"name": "a"}]})",
                  "plan.json");
            }),
            "plan.json: kernels[0].sms: missing required field");
}

// Found by the mutation test: nlohmann reports an overflowing literal as
// out_of_range, not parse_error; it must still be one InputError.
TEST(Loader, OverflowingNumberIsAnInputError) {
  EXPECT_EQ(
      parseError(R"({"schema": 1e999})"),
      "profiles.json: (root): malformed JSON: number overflow parsing '1e999'");
}
