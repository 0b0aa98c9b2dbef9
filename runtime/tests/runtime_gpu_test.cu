// GPU tests of libsmpart (label gpu). Each test skips, with the reason,
// when no GPU is usable; none passes silently.
#include "gpu_kernels.cuh"
#include "smpart/runtime.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <thread>
#include <vector>

namespace {

using smpart_test::BlockRecord;

#define CHECK_CUDA(expr) ASSERT_EQ((expr), cudaSuccess) << #expr
#define CHECK_OK(expr)                                                         \
  do {                                                                         \
    smpart::Status st_ = (expr);                                               \
    ASSERT_TRUE(st_.ok()) << #expr << ": " << st_.message();                   \
  } while (0)

class Gpu : public ::testing::Test {
protected:
  void SetUp() override {
    // The runtime's own check: it names the failing call and CUDA's reason.
    if (const smpart::Status st = smpart::init(); !st.ok())
      GTEST_SKIP() << st.message();
    CHECK_CUDA(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, 0));
    CHECK_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    CHECK_CUDA(cudaHostAlloc(&gate_, sizeof(unsigned), cudaHostAllocMapped));
    *gate_ = 0;
  }
  void TearDown() override {
    if (stream_)
      cudaStreamDestroy(stream_);
    if (gate_)
      cudaFreeHost(gate_);
  }
  void alloc(unsigned blocks, unsigned threads) {
    blocks_ = blocks;
    threads_ = threads;
    ASSERT_EQ(cudaMalloc(&rec_, blocks * sizeof(BlockRecord)), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&out_, blocks * threads * sizeof(float)), cudaSuccess);
    ASSERT_EQ(cudaMemset(rec_, 0, blocks * sizeof(BlockRecord)), cudaSuccess);
    ASSERT_EQ(cudaMemset(out_, 0, blocks * threads * sizeof(float)), cudaSuccess);
  }
  void closeGateLaunch() {
    *gate_ = 0;
    unsigned *dev = nullptr;
    ASSERT_EQ(cudaHostGetDevicePointer(reinterpret_cast<void **>(&dev), gate_, 0), cudaSuccess);
    smpart_test::gateKernel<<<1, 1, 0, stream_>>>(dev);
  }
  std::vector<BlockRecord> records() {
    std::vector<BlockRecord> r(blocks_);
    EXPECT_EQ(cudaMemcpy(r.data(), rec_, blocks_ * sizeof(BlockRecord),
                         cudaMemcpyDeviceToHost), cudaSuccess);
    return r;
  }
  std::vector<float> outputs() {
    std::vector<float> o(blocks_ * threads_);
    EXPECT_EQ(cudaMemcpy(o.data(), out_, o.size() * sizeof(float),
                         cudaMemcpyDeviceToHost), cudaSuccess);
    return o;
  }
  void expectEveryBlockOnce() {
    for (const BlockRecord &r : records())
      ASSERT_EQ(r.runs, 1u);
  }

  int sms_ = 0;
  cudaStream_t stream_ = nullptr;
  unsigned *gate_ = nullptr;
  BlockRecord *rec_ = nullptr;
  float *out_ = nullptr;
  unsigned blocks_ = 0, threads_ = 0;
};

TEST_F(Gpu, ResultsEqualOriginal) {
  alloc(20000, 128);
  smpart_test::recordOriginal<<<dim3(200, 100), 128, 0, stream_>>>(rec_, out_, 0);
  CHECK_CUDA(cudaStreamSynchronize(stream_));
  const std::vector<float> want = outputs();
  CHECK_CUDA(cudaMemset(out_, 0, blocks_ * threads_ * sizeof(float)));
  CHECK_CUDA(cudaMemset(rec_, 0, blocks_ * sizeof(BlockRecord)));
  smpart::KernelHandle h = smpart_test::launchRecord(dim3(200, 100), 128, stream_, rec_, out_, 0);
  CHECK_OK(h.status());
  // Stream semantics: synchronising the user's stream is enough.
  CHECK_CUDA(cudaStreamSynchronize(stream_));
  EXPECT_EQ(outputs(), want);
  expectEveryBlockOnce();
  smpart::Progress p;
  CHECK_OK(h.progress(p));
  EXPECT_EQ(p.done, p.total);
  EXPECT_EQ(p.resident_ctas, 0u);
  EXPECT_TRUE(h.lastBlockTaken());
}

TEST_F(Gpu, PreemptMidRunThenResume) {
  alloc(4000, 64);
  smpart::KernelHandle h = smpart_test::launchRecord(dim3(4000), 64, stream_, rec_, out_, 20000);
  CHECK_OK(h.status());
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  CHECK_OK(h.preempt());
  CHECK_OK(h.drain());
  smpart::Progress p;
  CHECK_OK(h.progress(p));
  EXPECT_GT(p.done, 0u);
  EXPECT_LT(p.done, p.total) << "kernel finished before preemption";
  EXPECT_EQ(p.resident_ctas, 0u);
  EXPECT_EQ(h.wait().code(), smpart::Errc::kPreempted);
  CHECK_OK(h.resume());
  CHECK_OK(h.wait());
  CHECK_CUDA(cudaStreamSynchronize(stream_));
  expectEveryBlockOnce();
}

TEST_F(Gpu, SmMaskRespected) {
  alloc(3000, 64);
  closeGateLaunch();
  smpart::KernelHandle h = smpart_test::launchRecord(dim3(3000), 64, stream_, rec_, out_, 5000);
  CHECK_OK(h.status());
  smpart::SmMask mask;
  for (int s = 0; s < sms_; s += 2)
    mask.set(s);
  CHECK_OK(h.setSmMask(mask));
  *gate_ = 1;
  CHECK_OK(h.wait());
  std::set<unsigned> used;
  for (const BlockRecord &r : records()) {
    ASSERT_EQ(r.runs, 1u);
    ASSERT_TRUE(mask.test(r.smid)) << "block ran on SM " << r.smid;
    used.insert(r.smid);
  }
  EXPECT_GT(used.size(), 1u);
}

TEST_F(Gpu, CtasPerSmAndBypassTagCounts) {
  alloc(6000, 64);
  closeGateLaunch();
  smpart::KernelHandle h = smpart_test::launchRecord(dim3(6000), 64, stream_, rec_, out_, 5000);
  CHECK_OK(h.status());
  ASSERT_GE(h.occupancy(), 4u);
  CHECK_OK(h.setCtasPerSm(4));
  CHECK_OK(h.setBypassCtasPerSm(1));
  *gate_ = 1;
  CHECK_OK(h.wait());
  // Before the grid runs out no CTA leaves, so per SM: at most 4 CTAs, and
  // exactly one of them tagged.
  std::map<unsigned, std::set<unsigned>> ctas, tagged;
  const std::vector<BlockRecord> recs = records();
  for (unsigned b = 0; b < blocks_ / 2; ++b) {
    ctas[recs[b].smid].insert(recs[b].cta);
    if (recs[b].bypass)
      tagged[recs[b].smid].insert(recs[b].cta);
  }
  for (const auto &[sm, set] : ctas) {
    EXPECT_LE(set.size(), 4u) << "SM " << sm;
    EXPECT_EQ(tagged[sm].size(), 1u) << "SM " << sm;
  }
  expectEveryBlockOnce();
}

TEST_F(Gpu, OpaqueKernelMixesWithTransformed) {
  alloc(1000, 64);
  smpart::KernelHandle h = smpart::launchOpaque(
      {"recordOriginal", reinterpret_cast<const void *>(&smpart_test::recordOriginal)},
      dim3(1000), dim3(64), 0, stream_,
      [this](dim3 g, dim3 b, std::size_t smem, cudaStream_t s) {
        smpart_test::recordOriginal<<<g, b, smem, s>>>(rec_, out_, 0);
      });
  CHECK_OK(h.status());
  EXPECT_EQ(h.preempt().code(), smpart::Errc::kNotSupported);
  CHECK_OK(h.wait());
  expectEveryBlockOnce();
}

} // namespace
