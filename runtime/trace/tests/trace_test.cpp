#include "smpart/trace.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace fs = std::filesystem;
using nlohmann::json;
using smpart::trace::TraceWriter;

namespace {

std::string tempPath(const std::string &Name) {
  fs::path Dir = fs::temp_directory_path() /
                 ("smpart-trace-test-" + std::to_string(getpid()));
  fs::create_directories(Dir);
  return (Dir / Name).string();
}

json readJson(const std::string &Path) {
  std::ifstream In(Path);
  std::stringstream SS;
  SS << In.rdbuf();
  json J = json::parse(SS.str(), nullptr, /*allow_exceptions=*/false);
  return J;
}

std::vector<json> named(const json &Doc, const std::string &Name) {
  std::vector<json> Out;
  for (const json &E : Doc["traceEvents"])
    if (E["name"] == Name)
      Out.push_back(E);
  return Out;
}

TEST(Trace, KernelLifetimeDecisionsAndKnobs) {
  std::string Path = tempPath("full.json");
  std::string Err;
  auto W = TraceWriter::open(Path, &Err);
  ASSERT_TRUE(W) << Err;
  double T = 0;
  W->setClockForTesting([&] { return T += 10; });
  W->kernelArrival(7, "sgemm", 1000);
  W->kernelStart(7, "sgemm");
  json Plan = {{"schema", "smpart.plan/1"}, {"policy", "even"}};
  W->decision("even", "arrival", {{"kernels", {"sgemm"}}}, Plan, {"n1"});
  W->knob(7, "sgemm", "ctas_per_sm", 4);
  W->allocation(7, "sgemm", 66, 4, false);
  W->preempt(7, "sgemm");
  W->resume(7, "sgemm");
  W->lastBlockTaken(7, "sgemm");
  W->kernelDone(7, "sgemm");
  ASSERT_TRUE(W->flush(&Err)) << Err;

  json Doc = readJson(Path);
  ASSERT_FALSE(Doc.is_discarded());
  EXPECT_EQ(Doc["otherData"]["schema"], "smpart.trace/1");
  // Async slice for the kernel: begin and end with the same id.
  auto Slices = named(Doc, "sgemm");
  ASSERT_EQ(Slices.size(), 2u);
  EXPECT_EQ(Slices[0]["ph"], "b");
  EXPECT_EQ(Slices[1]["ph"], "e");
  EXPECT_EQ(Slices[0]["id"], "0x7");
  EXPECT_EQ(Slices[0]["id"], Slices[1]["id"]);
  EXPECT_EQ(Slices[0]["args"]["total_blocks"], 1000);
  EXPECT_LT(Slices[0]["ts"].get<double>(), Slices[1]["ts"].get<double>());

  auto D = named(Doc, "decision");
  ASSERT_EQ(D.size(), 1u);
  EXPECT_EQ(D[0]["args"]["policy"], "even");
  EXPECT_EQ(D[0]["args"]["trigger"], "arrival");
  EXPECT_EQ(D[0]["args"]["plan"]["schema"], "smpart.plan/1");
  EXPECT_EQ(D[0]["args"]["notes"][0], "n1");

  auto K = named(Doc, "knob");
  ASSERT_EQ(K.size(), 1u);
  EXPECT_EQ(K[0]["args"]["knob"], "ctas_per_sm");
  EXPECT_EQ(K[0]["args"]["value"], 4);
  EXPECT_EQ(named(Doc, "preempt").size(), 1u);
  EXPECT_EQ(named(Doc, "resume").size(), 1u);
  EXPECT_EQ(named(Doc, "last_block_taken").size(), 1u);
  EXPECT_EQ(named(Doc, "start").size(), 1u);
  auto A = named(Doc, "allocation");
  ASSERT_EQ(A.size(), 1u);
  EXPECT_EQ(A[0]["args"]["sms"], 66);
  auto C = named(Doc, "sms sgemm #7");
  ASSERT_EQ(C.size(), 1u);
  EXPECT_EQ(C[0]["ph"], "C");
  // Timestamps never go backwards.
  double Prev = -1;
  for (const json &E : Doc["traceEvents"]) {
    EXPECT_GE(E["ts"].get<double>(), Prev);
    Prev = E["ts"].get<double>();
  }
}

TEST(Trace, OpaquePartitionTargetsAndHolds) {
  std::string Path = tempPath("opaque.json");
  std::string Err;
  auto W = TraceWriter::open(Path, &Err);
  ASSERT_TRUE(W) << Err;
  W->opaqueTarget("cublas", 8);
  W->opaqueHold("cublas", {3, 9, 64, 130}, false);
  W->opaqueHold("cublas", {3, 9, 64, 130}, true);
  W->opaqueHold("cublas", {}, true); // removed
  ASSERT_TRUE(W->flush(&Err)) << Err;
  json Doc = readJson(Path);
  auto T = named(Doc, "opaque_target");
  ASSERT_EQ(T.size(), 1u);
  EXPECT_EQ(T[0]["cat"], "opaque");
  EXPECT_EQ(T[0]["args"]["partition"], "cublas");
  EXPECT_EQ(T[0]["args"]["sms"], 8);
  auto H = named(Doc, "opaque_hold");
  ASSERT_EQ(H.size(), 3u);
  EXPECT_EQ(H[0]["args"]["sm_ids"], json({3, 9, 64, 130}));
  EXPECT_EQ(H[0]["args"]["sms"], 4);
  EXPECT_EQ(H[0]["args"]["clear"], false);
  EXPECT_EQ(H[1]["args"]["clear"], true);
  EXPECT_EQ(H[2]["args"]["sms"], 0);
  // Counter tracks for Perfetto.
  auto Held = named(Doc, "opaque sms cublas");
  ASSERT_EQ(Held.size(), 3u);
  EXPECT_EQ(Held[0]["ph"], "C");
  EXPECT_EQ(Held[0]["args"]["sms"], 4);
  EXPECT_EQ(named(Doc, "opaque target cublas").size(), 1u);
}

TEST(Trace, FileOnDiskIsAlwaysCompleteAndNoTempFileRemains) {
  std::string Path = tempPath("partial.json");
  auto W = TraceWriter::open(Path, nullptr);
  ASSERT_TRUE(W);
  W->setFlushIntervalMs(-1); // only explicit flushes
  W->kernelArrival(1, "a", 10);
  ASSERT_TRUE(W->flush());
  W->kernelArrival(2, "b", 10); // not flushed yet
  json Doc = readJson(Path);
  ASSERT_FALSE(Doc.is_discarded());
  EXPECT_EQ(named(Doc, "a").size(), 1u);
  EXPECT_EQ(named(Doc, "b").size(), 0u);
  for (const auto &E : fs::directory_iterator(fs::path(Path).parent_path()))
    EXPECT_EQ(E.path().string().find(".tmp."), std::string::npos) << E.path();
  W.reset(); // destructor flushes
  EXPECT_EQ(named(readJson(Path), "b").size(), 1u);
}

TEST(Trace, FlushIntervalZeroWritesEveryEvent) {
  std::string Path = tempPath("eager.json");
  auto W = TraceWriter::open(Path, nullptr);
  ASSERT_TRUE(W);
  W->setFlushIntervalMs(0);
  W->kernelArrival(3, "eager", 5);
  EXPECT_EQ(named(readJson(Path), "eager").size(), 1u);
}

TEST(Trace, WritesThroughASymlinkAndLeavesItALink) {
  const std::string Real = tempPath("real.json"), Link = tempPath("link.json");
  fs::remove(Link);
  {
    std::ofstream(Real) << "old";
  }
  fs::create_symlink(Real, Link);
  auto W = TraceWriter::open(Link, nullptr);
  ASSERT_TRUE(W);
  W->kernelArrival(4, "through", 5);
  ASSERT_TRUE(W->flush());
  EXPECT_TRUE(fs::is_symlink(Link)) << "the link was replaced by a file";
  EXPECT_EQ(named(readJson(Real), "through").size(), 1u);
}

TEST(Trace, WritesAFifoDirectlyAndNeverReplacesIt) {
  const std::string Fifo = tempPath("trace.fifo");
  fs::remove(Fifo);
  ASSERT_EQ(mkfifo(Fifo.c_str(), 0600), 0);
  std::string Read;
  std::thread Reader([&] {
    std::ifstream In(Fifo);
    std::stringstream SS;
    SS << In.rdbuf();
    Read = SS.str();
  });
  {
    auto W = TraceWriter::open(Fifo, nullptr);
    EXPECT_TRUE(W);
    if (W) {
      W->setFlushIntervalMs(0); // would write at every event
      W->kernelArrival(5, "piped", 5);
      EXPECT_TRUE(W->flush());
      W->kernelArrival(6, "last", 5);
    } else {
      std::ofstream(Fifo) << "{}"; // unblock the reader
    }
  } // one whole trace, at close
  Reader.join();
  EXPECT_EQ(fs::status(Fifo).type(), fs::file_type::fifo);
  json Doc = json::parse(Read, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(Doc.is_discarded()) << Read;
  EXPECT_EQ(named(Doc, "piped").size(), 1u);
  EXPECT_EQ(named(Doc, "last").size(), 1u);
}

TEST(Trace, UnwritablePathIsOneClearError) {
  std::string Err;
  auto W = TraceWriter::open("/nonexistent-dir/x/trace.json", &Err);
  EXPECT_FALSE(W);
  EXPECT_NE(Err.find("/nonexistent-dir/x/trace.json"), std::string::npos)
      << Err;
  EXPECT_EQ(Err.find('\n'), std::string::npos);
  Err.clear();
  EXPECT_FALSE(TraceWriter::open("", &Err));
  EXPECT_FALSE(Err.empty());
}

TEST(Trace, NonUtf8KernelNameStillGivesValidJson) {
  std::string Path = tempPath("utf8.json");
  auto W = TraceWriter::open(Path, nullptr);
  ASSERT_TRUE(W);
  W->kernelArrival(4, std::string("bad\xff\xfename"), 1);
  ASSERT_TRUE(W->flush());
  EXPECT_FALSE(readJson(Path).is_discarded());
}

// The global writer is flushed when the process calls std::exit with
// events that were never flushed explicitly.
TEST(TraceDeathTest, GlobalWriterFlushedAtExit) {
  std::string Path = tempPath("exit.json");
  std::remove(Path.c_str());
  EXPECT_EXIT(
      {
        auto W = TraceWriter::open(Path, nullptr);
        if (!W)
          std::exit(9);
        W->setFlushIntervalMs(-1);
        TraceWriter *Raw = W.get();
        smpart::trace::setGlobal(std::move(W));
        Raw->kernelArrival(11, "exits_early", 100);
        Raw->note("test", "about to exit");
        std::exit(3);
      },
      ::testing::ExitedWithCode(3), "");
  json Doc = readJson(Path);
  ASSERT_FALSE(Doc.is_discarded());
  EXPECT_EQ(named(Doc, "exits_early").size(), 1u);
  EXPECT_EQ(named(Doc, "note").size(), 1u);
}

#ifdef SMPART_CHECK_FORMAT
// The output passes the documented-format checker (docs/check_format.py).
TEST(Trace, PassesDocumentedFormatCheck) {
  if (std::system("python3 -c 1 >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "python3 not available";
  std::string Path = tempPath("checked.json");
  {
    auto W = TraceWriter::open(Path, nullptr);
    ASSERT_TRUE(W);
    W->kernelArrival(1, "k", 3);
    W->decision("greedy", "arrival", json::object(), json::object(), {});
    W->allocation(1, "k", 132, 2, false);
    W->opaqueTarget("cublas", 8);
    W->opaqueHold("cublas", {3, 9, 64, 130}, false);
    W->kernelDone(1, "k");
  }
  std::string Cmd =
      std::string("python3 ") + SMPART_CHECK_FORMAT + " trace " + Path;
  EXPECT_EQ(std::system(Cmd.c_str()), 0) << Cmd;
}
#endif

} // namespace
