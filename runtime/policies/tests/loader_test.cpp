#include "test_support.hpp"

#include <cstdio>

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
            "profiles.json: kernels[0].block.threads: expected a thread count "
            "per block (CUDA allows at most 1024) in [1, 1024]");
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
  ProfileSet T = profiles(gpu(8), json::array({{{"name", "a"}}}));
  EXPECT_EQ(errorOf([&] { decide("hsm-fair", T); }),
            "test.json: kernels[0].shared: missing; required by policy "
            "hsm-fair");
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
            "/nonexistent/p.json: No such file or directory");
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

// A re-plan laid out in the order kernels hold SMs now: "c" (last now)
// keeps its range when only "a" and "b" trade SMs; a kernel new to the plan
// goes last; the k-th of a repeated name follows the k-th one now.
TEST(PlanLayout, KernelsKeepTheOrderTheyHoldSmsIn) {
  auto plan = [](std::vector<std::pair<std::string, int>> Ks) {
    Plan P;
    for (auto &[Name, Sms] : Ks) {
      KernelDecision D;
      D.name = Name;
      D.sms = Sms;
      P.kernels.push_back(D);
    }
    return P;
  };
  Plan Current = plan({{"c", 44}, {"a", 44}, {"b", 44}});
  Current.kernels[0].sm_first = 88;
  Current.kernels[1].sm_first = 0;
  Current.kernels[2].sm_first = 44;
  Plan Next = plan({{"c", 44}, {"a", 60}, {"b", 28}});
  layOutInTheOrderOf(Next, Current);
  EXPECT_EQ(Next.kernels[1].sm_first, 0);  // a
  EXPECT_EQ(Next.kernels[2].sm_first, 60); // b
  EXPECT_EQ(Next.kernels[0].sm_first, 88); // c: unchanged
  Plan WithNew = plan({{"new", 10}, {"a", 40}, {"b", 40}, {"c", 42}});
  layOutInTheOrderOf(WithNew, Current);
  EXPECT_EQ(WithNew.kernels[1].sm_first, 0);
  EXPECT_EQ(WithNew.kernels[2].sm_first, 40);
  EXPECT_EQ(WithNew.kernels[3].sm_first, 80);
  EXPECT_EQ(WithNew.kernels[0].sm_first, 122);
  Plan Twice = plan({{"k", 66}, {"k", 66}});
  Plan TwiceNow = plan({{"k", 66}, {"k", 66}});
  TwiceNow.kernels[0].sm_first = 66;
  TwiceNow.kernels[1].sm_first = 0;
  layOutInTheOrderOf(Twice, TwiceNow);
  EXPECT_EQ(Twice.kernels[0].sm_first, 66);
  EXPECT_EQ(Twice.kernels[1].sm_first, 0);
}

// A typo in a hand-edited plan is a warning with its path; an entry named
// twice would be counted twice, so it is an error.
TEST(PlanIo, UnknownFieldsWarnAndNamesAreUnique) {
  std::vector<std::string> Warnings;
  const Plan P = parsePlan(
      R"({"schema": "smpart.plan/1", "kernels": [{"name": "a", "sms": 4,
          "sm_first": 0, "ctas_per_smm": 2}], "note": []})",
      "plan.json", &Warnings);
  EXPECT_EQ(P.kernels.at(0).ctas_per_sm, 0);
  ASSERT_EQ(Warnings.size(), 2u);
  EXPECT_EQ(Warnings[0], "plan.json: note: unknown field; ignored (did you "
                         "mean 'notes'?)");
  EXPECT_EQ(Warnings[1], "plan.json: kernels[0].ctas_per_smm: unknown field; "
                         "ignored (did you mean 'ctas_per_sm'?)");
  EXPECT_EQ(errorOf([] {
              parsePlan(R"({"schema": "smpart.plan/1", "kernels": [
                  {"name": "a", "sms": 4, "sm_first": 0},
                  {"name": "a", "sms": 4, "sm_first": 4}]})",
                        "plan.json");
            }),
            "plan.json: kernels[1].name: expected a unique rewritten entry "
            "name, \"a\" repeats");
}

// A key given twice would silently take its last value.
TEST(Loader, DuplicateKeysNameTheirPath) {
  EXPECT_EQ(parseError(R"({"schema": "smpart.profiles/1",
                           "gpu": {"num_sms": 132, "num_sms": 4}})"),
            "profiles.json: gpu.num_sms: key given twice in one object");
  EXPECT_EQ(
      parseError(R"({"kernels": [{"a": 1}, {"b": [1, {"c": 1, "c": 2}]}]})"),
      "profiles.json: kernels[1].b[1].c: key given twice in one object");
}

// Found by the mutation test: nlohmann reports an overflowing literal as
// out_of_range, not parse_error; it must still be one InputError.
TEST(Loader, OverflowingNumberIsAnInputError) {
  EXPECT_EQ(
      parseError(R"({"schema": 1e999})"),
      "profiles.json: (root): malformed JSON: number overflow parsing '1e999'");
}

// A block no GPU can run is refused where it is written, not planned with
// 0 or 1 CTAs per SM.
TEST(Loader, BlocksMustFitAnSm) {
  EXPECT_EQ(kernelsError(json::array(
                {{{"name", "a"}, {"block", {{"threads", 100000}}}}})),
            "profiles.json: kernels[0].block.threads: expected a thread count "
            "per block (CUDA allows at most 1024) in [1, 1024]");
  json Small = gpu(8);
  Small["max_threads_per_sm"] = 512;
  json Doc = {{"schema", "smpart.profiles/1"},
              {"gpu", Small},
              {"kernels",
               json::array({{{"name", "a"}, {"block", {{"threads", 768}}}}})}};
  EXPECT_EQ(parseError(Doc.dump()),
            "profiles.json: kernels[0].block.threads: expected a thread count "
            "per block (at most gpu.max_threads_per_sm) in [1, 512]");
  EXPECT_EQ(kernelsError(json::array(
                {{{"name", "a"},
                  {"block", {{"threads", 1024}, {"regs_per_thread", 128}}}}})),
            "profiles.json: kernels[0].block.regs_per_thread: expected a block "
            "that fits gpu.regs_per_sm (65536), got 1024 threads x 128 "
            "registers");
  EXPECT_EQ(kernelsError(json::array(
                {{{"name", "a"},
                  {"block", {{"threads", 32}, {"smem_bytes", 1 << 20}}}}})),
            "profiles.json: kernels[0].block.smem_bytes: expected a byte count "
            "(at most gpu.smem_per_sm) in [0, 233472]");
}

// Times that would overflow the predictions are input errors naming the
// path, never null predictions.
TEST(Loader, TimesKeepPredictionsFinite) {
  json Curve = json::array(
      {{{"sms", 4}, {"time_ms", 1e308}}, {{"sms", 8}, {"time_ms", 1.0}}});
  EXPECT_EQ(
      kernelsError(
          json::array({{{"name", "a"}, {"isolated", {{"by_sms", Curve}}}}})),
      "profiles.json: kernels[0].isolated.by_sms[0].time_ms: expected a time "
      "in ms in [1e-06, 1e+09]");
  json Ctas = json::array({{{"ctas", 1}, {"time_ms", 1e-300}}});
  EXPECT_EQ(kernelsError(json::array(
                {{{"name", "a"}, {"isolated", {{"by_ctas_per_sm", Ctas}}}}})),
            "profiles.json: kernels[0].isolated.by_ctas_per_sm[0].time_ms: "
            "expected a time in ms in [1e-06, 1e+09]");
}

// Positive quantities say "> 0" or "(0, max]", not ">= 2.22507e-308".
TEST(Loader, PositiveNumbersSayGreaterThanZero) {
  json G = gpu(8);
  G["clock_ghz"] = 0;
  json Doc = {{"schema", "smpart.profiles/1"},
              {"gpu", G},
              {"kernels", json::array({{{"name", "a"}}})}};
  EXPECT_EQ(parseError(Doc.dump()),
            "profiles.json: gpu.clock_ghz: expected a positive number in (0, "
            "1000]");
  EXPECT_EQ(kernelsError(json::array({{{"name", "a"}, {"np_target", 0}}})),
            "profiles.json: kernels[0].np_target: expected a fraction in (0, "
            "1]");
}

TEST(Loader, UnknownFieldsAreWarningsWithTheirPath) {
  json G = gpu(8);
  G["num_smss"] = 8;
  json Doc = {
      {"schema", "smpart.profiles/1"},
      {"gpu", G},
      {"kernels",
       json::array({{{"name", "a"},
                     {"block", {{"threads", 64}, {"colour", "red"}}},
                     {"isolated",
                      {{"by_sms", json::array({{{"sms", 4},
                                                {"time_ms", 1.0},
                                                {"tim_ms", 2.0}}})}}}}})},
      {"comment", "x"}};
  ProfileSet S = parseProfiles(Doc.dump(), "profiles.json");
  EXPECT_EQ(S.warnings,
            (std::vector<std::string>{
                "profiles.json: comment: unknown field; ignored",
                "profiles.json: gpu.num_smss: unknown field; ignored (did you "
                "mean 'num_sms'?)",
                "profiles.json: kernels[0].block.colour: unknown field; "
                "ignored",
                "profiles.json: kernels[0].isolated.by_sms[0].tim_ms: unknown "
                "field; ignored (did you mean 'time_ms'?)"}));
  EXPECT_TRUE(example("compute_memory_pair.json").warnings.empty());
}

TEST(Loader, AnEndlessFileIsRefusedAtTheLimit) {
  // /dev/zero never ends: without the limit the read fills the memory.
  EXPECT_EQ(errorOf([] { readTextFile("/dev/zero", 1000); }),
            "/dev/zero: larger than 1000 bytes: not a document smpart reads");
  // A file of exactly the limit is read whole.
  const std::string Path = ::testing::TempDir() + "loader_limit.json";
  {
    std::FILE *F = std::fopen(Path.c_str(), "wb");
    ASSERT_NE(F, nullptr);
    std::fputs("0123456789", F);
    std::fclose(F);
  }
  EXPECT_EQ(readTextFile(Path, 10), "0123456789");
  EXPECT_EQ(errorOf([&] { readTextFile(Path, 9); }),
            Path + ": larger than 9 bytes: not a document smpart reads");
  std::remove(Path.c_str());
}

TEST(Loader, FolderIsNotMalformedJson) {
  EXPECT_EQ(errorOf([] { loadProfiles(SMPART_POLICY_EXAMPLES); }),
            std::string(SMPART_POLICY_EXAMPLES) +
                ": expected a file, got a folder");
}
