// smpart::Partition on a GPU: work on a partition's stream runs only on the
// partition's real SM ids; cuBLAS SGEMM confined to a partition while a
// rewritten memory-bound kernel runs on the other SMs; a resize between
// launches while work is in flight; a confined launch captured into a
// graph while another stream's confined launch runs at once; confined
// launches of two streams at once; a launch through a kernel pointer; the
// fallback without green contexts.
// Every test skips, with the reason, without a GPU or (but the fallback
// test) without green contexts; each fails within 45 s rather than hang.
#include "bounded_wait.hpp"
#include "gpu_test_checks.hpp"
#include "green_contexts.hpp"
#include "kernel_names.hpp"
#if SMPART_PARTITION_INPUTS
#include "gpu_inputs.hpp"
#endif

#include "smpart/confined.hpp"
#include "smpart/partition.hpp"
#include "smpart/runtime.hpp"

#include <cublas_v2.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace {

using smpart_test::syncStream;

/// Records each CTA's %smid, stays `spin_ns`, and (with `after` set) checks
/// that `after` CTAs of an earlier kernel had all finished when it started.
__global__ void recordSms(unsigned *bitmap, unsigned long long spin_ns,
                          unsigned *finished, unsigned after,
                          unsigned *violations) {
  unsigned id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  if (threadIdx.x == 0) {
    if (id < smpart::kMaxSms)
      atomicOr(&bitmap[id / 32], 1u << (id % 32));
    if (after && atomicAdd(finished, 0) < after)
      atomicAdd(violations, 1);
  }
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    __nanosleep(1000);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < spin_ns);
  __syncthreads();
  if (threadIdx.x == 0 && !after)
    atomicAdd(finished, 1);
}

/// Waits, at most `limit_ns`, for `*flag` and counts a timeout if it did
/// not come; with `set`, sets it instead.
__global__ void meet(unsigned *flag, unsigned set, unsigned long long limit_ns,
                     unsigned *timeouts) {
  if (threadIdx.x != 0)
    return;
  if (set) {
    atomicExch(flag, 1u);
    return;
  }
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    if (atomicAdd(flag, 0) != 0)
      return;
    __nanosleep(1000);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < limit_ns);
  atomicAdd(timeouts, 1);
}

/// Device buffers of one recordSms run and its result on the host.
struct SmRecord {
  unsigned *dev = nullptr; // bitmap, then finished, then violations
  void alloc() {
    ASSERT_EQ(cudaMalloc(&dev, (smpart::kMaskWords + 2) * sizeof(unsigned)),
              cudaSuccess);
    ASSERT_EQ(cudaMemset(dev, 0, (smpart::kMaskWords + 2) * sizeof(unsigned)),
              cudaSuccess);
    // The legacy stream is not ordered with the non-blocking streams.
    ASSERT_EQ(smpart_test::syncStream(0), cudaSuccess);
  }
  unsigned *finished() const { return dev + smpart::kMaskWords; }
  unsigned *violations() const { return dev + smpart::kMaskWords + 1; }
  void launch(cudaStream_t s, unsigned ctas, unsigned long long spin_ns,
              const SmRecord *earlier = nullptr, unsigned earlier_ctas = 0) {
    recordSms<<<ctas, 128, 0, s>>>(dev, spin_ns,
                                   earlier ? earlier->finished() : finished(),
                                   earlier_ctas, violations());
  }
  /// A refused kernel's launch of recordSms, confined to the partition
  /// `name` (smpart::launchConfined).
  smpart::KernelHandle launchConfined(const char *name, cudaStream_t s,
                                      unsigned ctas,
                                      unsigned long long spin_ns) {
    return smpart::launchConfined(
        {name, reinterpret_cast<const void *>(&recordSms)}, dim3(ctas),
        dim3(128), 0, s,
        [this, spin_ns](dim3 g, dim3 b, std::size_t sm, cudaStream_t ps) {
          recordSms<<<g, b, sm, ps>>>(dev, spin_ns, finished(), 0,
                                      violations());
        });
  }
  std::vector<unsigned> ids(unsigned *violations_out = nullptr) const {
    std::vector<unsigned> host(smpart::kMaskWords + 2);
    EXPECT_EQ(cudaMemcpy(host.data(), dev, host.size() * sizeof(unsigned),
                         cudaMemcpyDeviceToHost),
              cudaSuccess);
    std::vector<unsigned> out;
    for (unsigned id = 0; id < smpart::kMaxSms; ++id)
      if ((host[id / 32] >> (id % 32)) & 1u)
        out.push_back(id);
    if (violations_out)
      *violations_out = host[smpart::kMaskWords + 1];
    return out;
  }
};

/// The SM mask of a kernel's knobs.
smpart::SmMask maskOf(const smpart::Knobs &k) {
  smpart::SmMask m;
  for (unsigned id = 0; id < smpart::kMaxSms; ++id)
    if ((k.sm_mask[id / 32] >> (id % 32)) & 1u)
      m.set(id);
  return m;
}

/// Ids of `seen` that are not in `allowed`.
std::vector<unsigned> outside(const std::vector<unsigned> &seen,
                              const std::vector<unsigned> &allowed) {
  std::vector<unsigned> out;
  for (unsigned id : seen)
    if (!std::binary_search(allowed.begin(), allowed.end(), id))
      out.push_back(id);
  return out;
}

std::string str(const std::vector<unsigned> &v) {
  std::string s;
  for (unsigned id : v)
    s += (s.empty() ? "" : ",") + std::to_string(id);
  return "{" + s + "}";
}

/// A plan the test sets by hand; holds move every running rewritten
/// kernel, and every later one (an observer), off the held SMs: what the
/// controller does, small enough to check here.
class TestPlanner : public smpart::OpaquePlanner,
                    public smpart::LaunchObserver {
public:
  explicit TestPlanner(std::vector<unsigned> all) : all_(std::move(all)) {}
  std::mutex mu;
  unsigned target_sms = 0;
  std::vector<unsigned> held;
  std::vector<std::string> errors;

  void add(const std::string &, unsigned, unsigned, double) override {}
  void remove(const std::string &) override {
    std::lock_guard<std::mutex> lock(mu);
    held.clear();
  }
  unsigned target(const std::string &) override {
    std::lock_guard<std::mutex> lock(mu);
    return target_sms;
  }
  bool hold(const std::string &, const std::vector<unsigned> &sm_ids) override {
    std::lock_guard<std::mutex> lock(mu);
    held = sm_ids;
    bool applied = true;
    for (smpart::KernelHandle h : smpart::activeKernels()) {
      if (h.opaque())
        continue;
      if (maskOf(h.knobs()) != freeMask())
        (void)h.setSmMask(freeMask());
      applied &= h.knobsApplied();
    }
    return applied;
  }
  void onLaunch(const smpart::KernelHandle &k) override {
    std::lock_guard<std::mutex> lock(mu);
    if (k.opaque() || held.empty())
      return;
    smpart::KernelHandle h = k;
    if (!h.setSmMask(freeMask()).ok())
      errors.push_back(std::string("mask of ") + h.name());
  }
  smpart::SmMask freeMask() const {
    smpart::SmMask m;
    for (unsigned id : all_)
      if (std::find(held.begin(), held.end(), id) == held.end())
        m.set(id);
    return m;
  }

private:
  std::vector<unsigned> all_;
};

class PartitionGpu : public ::testing::Test {
protected:
  void SetUp() override {
    if (const smpart::Status st = smpart::init(); !st.ok())
      GTEST_SKIP() << st.message();
    watchdog_ = smpart_test::watchCurrentTest();
    CHECK_OK(smpart::deviceInfo(info_));
    if (!info_.sm_ids_probed)
      GTEST_SKIP() << "the runtime's SM-id probe did not answer (busy GPU)";
    cudaFuncAttributes attr;
    CHECK_CUDA(cudaFuncGetAttributes(&attr, recordSms));
  }
  /// Opens `name`; skips the test when green contexts are unavailable.
  std::shared_ptr<smpart::Partition> open(const std::string &name,
                                          smpart::PartitionOptions o) {
    std::shared_ptr<smpart::Partition> p;
    const smpart::Status st = smpart::Partition::open(name, o, p);
    EXPECT_TRUE(st.ok()) << st.message();
    return p;
  }
  /// Opens `name` on `sms` SMs of its own, following no plan.
  std::shared_ptr<smpart::Partition> openSized(const std::string &name,
                                               unsigned sms) {
    smpart::PartitionOptions o;
    o.sms = sms;
    o.follow_plan = false;
    return open(name, o);
  }
  smpart::DeviceInfo info_;
  std::unique_ptr<smpart_test::Watchdog> watchdog_;
};

#define SKIP_UNLESS_CONFINED(p)                                                \
  do {                                                                         \
    ASSERT_TRUE(p);                                                            \
    if (!(p)->confined())                                                      \
      GTEST_SKIP() << "no green contexts: " << (p)->reason();                  \
  } while (0)

TEST_F(PartitionGpu, KernelRunsOnlyOnThePartitionsSms) {
  auto p = openSized("gpu_only_its_sms", info_.num_sms / 3);
  SKIP_UNLESS_CONFINED(p);
  const smpart::PartitionState st = p->state();
  ASSERT_TRUE(st.sm_ids_known) << "the partition's probe did not answer";
  ASSERT_GE(st.sm_ids.size(), st.sms);
  ASSERT_LT(st.sms, info_.num_sms);
  EXPECT_TRUE(outside(st.sm_ids, info_.sm_ids).empty()) << str(st.sm_ids);

  SmRecord in_part, plain;
  in_part.alloc();
  plain.alloc();
  cudaStream_t s = p->stream();
  in_part.launch(s, 8 * info_.num_sms, 20000);
  cudaStream_t other;
  CHECK_CUDA(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));
  CHECK_CUDA(syncStream(s));
  plain.launch(other, 8 * info_.num_sms, 20000);
  CHECK_CUDA(syncStream(other));
  const std::vector<unsigned> seen = in_part.ids();
  ASSERT_FALSE(seen.empty());
  EXPECT_TRUE(outside(seen, st.sm_ids).empty())
      << "ran on " << str(outside(seen, st.sm_ids)) << " outside "
      << str(st.sm_ids);
  // Not vacuous: the same kernel on an ordinary stream reaches other SMs.
  EXPECT_FALSE(outside(plain.ids(), st.sm_ids).empty());
  smpart::Partition::close("gpu_only_its_sms");
}

// A launch through a kernel pointer, as smpart-transform writes it, runs
// on the partition named after the kernel the pointer holds: the name
// CUDA gives it (cudaFuncGetName), demangled as a direct launch names it.
TEST_F(PartitionGpu, LaunchThroughAKernelPointerRunsOnItsKernelsPartition) {
  const char *name = "(anonymous namespace)::recordSms";
  auto p = openSized(name, info_.num_sms / 3);
  SKIP_UNLESS_CONFINED(p);
  const smpart::PartitionState st = p->state();
  ASSERT_TRUE(st.sm_ids_known) << "the partition's probe did not answer";
  const smpart::detail::PointedKernel &k =
      smpart::detail::pointedKernel(reinterpret_cast<const void *>(&recordSms));
  ASSERT_TRUE(k.known);
  EXPECT_EQ(k.name, name);
  EXPECT_FALSE(k.clustered);

  SmRecord rec;
  rec.alloc();
  cudaStream_t s;
  CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  auto *fp = recordSms;
  fp<<<8 * info_.num_sms, 128, 0, smpart::confined(fp, s)>>>(
      rec.dev, 20000, rec.finished(), 0, rec.violations());
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(syncStream(s));
  const std::vector<unsigned> seen = rec.ids();
  ASSERT_FALSE(seen.empty());
  EXPECT_TRUE(outside(seen, st.sm_ids).empty())
      << "ran on " << str(outside(seen, st.sm_ids)) << " outside "
      << str(st.sm_ids);
  smpart::Partition::close(name);
}

TEST_F(PartitionGpu, ResizeBetweenLaunchesWhileWorkIsInFlight) {
  auto plan = std::make_shared<TestPlanner>(info_.sm_ids);
  smpart::PartitionOptions o;
  o.planner = plan;
  plan->target_sms = 1; // the smallest allowed size
  auto p = open("gpu_resize", o);
  SKIP_UNLESS_CONFINED(p);
  const smpart::PartitionState small = p->state();
  ASSERT_TRUE(small.sm_ids_known);

  // Work in flight on the small context: 4 CTAs per SM of it, 30 ms each.
  SmRecord first, second;
  first.alloc();
  second.alloc();
  cudaStream_t old_stream = p->stream();
  const unsigned first_ctas = 4 * small.sms;
  first.launch(old_stream, first_ctas, 30000000ull);

  plan->target_sms = 3 * small.sms;     // three groups
  EXPECT_EQ(p->state().sms, small.sms); // not before a boundary
  cudaStream_t new_stream = p->stream();
  const smpart::PartitionState big = p->state();
  ASSERT_GT(big.sms, small.sms) << "the device allows no larger partition";
  EXPECT_NE(new_stream, old_stream);
  EXPECT_EQ(big.switches, small.switches + 1);
  // While the first kernel may run, the plan is told both sets.
  {
    std::lock_guard<std::mutex> lock(plan->mu);
    EXPECT_TRUE(outside(small.sm_ids, plan->held).empty());
  }
  // Launched behind the fence: every CTA of the first kernel finished.
  second.launch(new_stream, 4 * big.sms, 1000, &first, first_ctas);
  CHECK_CUDA(syncStream(new_stream, 20));
  CHECK_CUDA(syncStream(old_stream)); // the old stream is still alive
  unsigned violations = 0;
  const std::vector<unsigned> second_ids = second.ids(&violations);
  EXPECT_EQ(violations, 0u) << "work on the new context ran before the old";
  EXPECT_TRUE(outside(first.ids(), small.sm_ids).empty());
  ASSERT_TRUE(big.sm_ids_known);
  EXPECT_TRUE(outside(second_ids, big.sm_ids).empty())
      << str(outside(second_ids, big.sm_ids));
  smpart::Partition::close("gpu_resize");
}

// The refused kernel launched from two streams runs at once on the
// partition: the first waits for the second, which a shared stream would
// queue behind it (the first then times out).
TEST_F(PartitionGpu, ConfinedLaunchesOfTwoStreamsRunAtOnce) {
  auto p = openSized("gpu_two_streams", info_.num_sms / 4);
  SKIP_UNLESS_CONFINED(p);
  unsigned *dev = nullptr; // flag, timeouts
  CHECK_CUDA(cudaMalloc(&dev, 2 * sizeof(unsigned)));
  CHECK_CUDA(cudaMemset(dev, 0, 2 * sizeof(unsigned)));
  CHECK_CUDA(syncStream(0));
  cudaStream_t a, b;
  CHECK_CUDA(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
  CHECK_CUDA(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
  const smpart::KernelInfo info{"gpu_two_streams",
                                reinterpret_cast<const void *>(&meet)};
  smpart::KernelHandle waits = smpart::launchConfined(
      info, dim3(1), dim3(32), 0, a,
      [&](dim3 g, dim3 bl, std::size_t sm, cudaStream_t s) {
        meet<<<g, bl, sm, s>>>(dev, 0, 5000000000ull, dev + 1);
      });
  smpart::KernelHandle sets = smpart::launchConfined(
      info, dim3(1), dim3(32), 0, b,
      [&](dim3 g, dim3 bl, std::size_t sm, cudaStream_t s) {
        meet<<<g, bl, sm, s>>>(dev, 1, 0, dev + 1);
      });
  EXPECT_TRUE(waits.status().ok()) << waits.status().message();
  EXPECT_TRUE(sets.status().ok()) << sets.status().message();
  CHECK_CUDA(smpart_test::syncStreams({a, b}, 20));
  unsigned timeouts = 0;
  CHECK_CUDA(
      cudaMemcpy(&timeouts, dev + 1, sizeof timeouts, cudaMemcpyDeviceToHost));
  EXPECT_EQ(timeouts, 0u) << "the second stream's launch waited for the first";
  cudaFree(dev);
  smpart::Partition::close("gpu_two_streams");
}

TEST_F(PartitionGpu, ConfinedLaunchIsLegalUnderStreamCapture) {
  auto p = openSized("gpu_captured", info_.num_sms / 4);
  SKIP_UNLESS_CONFINED(p);
  const smpart::PartitionState st = p->state();
  ASSERT_TRUE(st.sm_ids_known);
  SmRecord r, eager;
  r.alloc();
  eager.alloc(); // cudaMalloc is not allowed while capturing globally
  cudaStream_t user, other;
  CHECK_CUDA(cudaStreamCreateWithFlags(&user, cudaStreamNonBlocking));
  CHECK_CUDA(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));
  CHECK_CUDA(cudaStreamBeginCapture(user, cudaStreamCaptureModeGlobal));
  smpart::KernelHandle h =
      r.launchConfined("gpu_captured", user, 8 * info_.num_sms, 2000);
  // Another stream's confined launch meanwhile runs at once on its own
  // lane: the capture takes in only `user`'s.
  smpart::KernelHandle e =
      eager.launchConfined("gpu_captured", other, 8 * info_.num_sms, 2000);
  EXPECT_TRUE(e.status().ok()) << e.status().message();
  EXPECT_FALSE(e.captured());
  cudaGraph_t graph = nullptr;
  CHECK_CUDA(cudaStreamEndCapture(user, &graph)); // joined: no error
  EXPECT_TRUE(h.status().ok()) << h.status().message();
  EXPECT_TRUE(h.captured());
  CHECK_CUDA(syncStream(other)); // a query: not while capturing globally
  ASSERT_FALSE(eager.ids().empty());
  EXPECT_TRUE(outside(eager.ids(), st.sm_ids).empty())
      << "eager launch ran on " << str(outside(eager.ids(), st.sm_ids));
  cudaGraphExec_t exec = nullptr;
  CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  CHECK_CUDA(cudaGraphLaunch(exec, user));
  CHECK_CUDA(syncStream(user));
  const std::vector<unsigned> seen = r.ids();
  ASSERT_FALSE(seen.empty());
  EXPECT_TRUE(outside(seen, st.sm_ids).empty())
      << "replay ran on " << str(outside(seen, st.sm_ids));
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  smpart::Partition::close("gpu_captured");
}

#if SMPART_PARTITION_INPUTS
TEST_F(PartitionGpu, CublasSgemmConfinedBesideARewrittenMemoryBoundKernel) {
  auto plan = std::make_shared<TestPlanner>(info_.sm_ids);
  smpart::setLaunchObserver(plan);
  // saxpy, rewritten, on every SM, several launches in flight.
  const int n = 1 << 24;
  float *x = nullptr, *y = nullptr;
  CHECK_CUDA(cudaMalloc(&x, n * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&y, n * sizeof(float)));
  std::vector<float> hx(n, 1.0f), hy(n, 2.0f);
  CHECK_CUDA(cudaMemcpy(x, hx.data(), n * sizeof(float), cudaMemcpyDefault));
  CHECK_CUDA(cudaMemcpy(y, hy.data(), n * sizeof(float), cudaMemcpyDefault));
  // A pageable copy may return before its DMA is done, and the legacy
  // stream is not ordered with `mem`.
  CHECK_CUDA(syncStream(0));
  cudaStream_t mem;
  CHECK_CUDA(cudaStreamCreateWithFlags(&mem, cudaStreamNonBlocking));
  const int reps = 40;
  gpu_xf_vector_ops::launch_saxpy(n, 0.5f, x, y, mem);

  // The partition: a quarter of the GPU, held before its first work.
  plan->target_sms = info_.num_sms / 4;
  smpart::PartitionOptions o;
  o.planner = plan;
  o.hold_timeout_ms = 5000;
  auto p = open("gpu_cublas", o);
  SKIP_UNLESS_CONFINED(p);
  for (int r = 1; r < reps; ++r)
    gpu_xf_vector_ops::launch_saxpy(n, 0.5f, x, y, mem);
  const smpart::PartitionState st = p->state();
  ASSERT_TRUE(st.sm_ids_known);
  EXPECT_TRUE(st.held) << "the rewritten kernel did not leave the partition";
  const smpart::SmMask free_mask = plan->freeMask();
  for (unsigned id : st.sm_ids)
    EXPECT_FALSE(free_mask.test(id)) << id;
  for (smpart::KernelHandle h : smpart::activeKernels())
    if (!h.opaque())
      for (unsigned id : st.sm_ids)
        EXPECT_FALSE(maskOf(h.knobs()).test(id))
            << h.name() << " may still use SM " << id;

  // SGEMM on the partition: C = A * B with A = 1, B = 2 (each entry 2k).
  const int m = 2048, k = 1024;
  float *a = nullptr, *b = nullptr, *c = nullptr;
  CHECK_CUDA(cudaMalloc(&a, m * k * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&b, k * m * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&c, m * m * sizeof(float)));
  std::vector<float> ha(m * k, 1.0f), hb(k * m, 2.0f);
  CHECK_CUDA(cudaMemcpy(a, ha.data(), ha.size() * 4, cudaMemcpyDefault));
  CHECK_CUDA(cudaMemcpy(b, hb.data(), hb.size() * 4, cudaMemcpyDefault));
  CHECK_CUDA(syncStream(0)); // as for x and y
  cublasHandle_t blas;
  ASSERT_EQ(cublasCreate(&blas), CUBLAS_STATUS_SUCCESS);
  const float one = 1.0f, zero = 0.0f;
  SmRecord marker;
  marker.alloc();
  for (int r = 0; r < 4; ++r) {
    ASSERT_EQ(cublasSetStream(blas, p->stream()), CUBLAS_STATUS_SUCCESS);
    ASSERT_EQ(cublasSgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, m, m, k, &one, a, m,
                          b, k, &zero, c, m),
              CUBLAS_STATUS_SUCCESS);
  }
  // The driver confines every kernel of the stream, cuBLAS's included; a
  // marker on the same stream shows where that stream's work runs.
  marker.launch(p->currentStream(), 8 * info_.num_sms, 2000);
  CHECK_CUDA(syncStream(p->currentStream(), 20));
  CHECK_CUDA(syncStream(mem, 20));
  EXPECT_TRUE(outside(marker.ids(), st.sm_ids).empty());
  std::vector<float> hc(m * m);
  CHECK_CUDA(cudaMemcpy(hc.data(), c, hc.size() * 4, cudaMemcpyDefault));
  for (std::size_t i = 0; i < hc.size(); i += 4099)
    ASSERT_EQ(hc[i], 2.0f * k) << i;
  CHECK_CUDA(cudaMemcpy(hy.data(), y, n * sizeof(float), cudaMemcpyDefault));
  for (int i = 0; i < n; i += 65537)
    ASSERT_EQ(hy[i], 2.0f + 0.5f * reps) << i;
  EXPECT_TRUE(plan->errors.empty());
  smpart::setLaunchObserver(nullptr);
  cublasDestroy(blas);
  smpart::Partition::close("gpu_cublas");
}
#endif

TEST_F(PartitionGpu, FallbackWithoutGreenContextsSaysSoAndRuns) {
  // A driver that lacks a green-context entry point.
  smpart::detail::green::Pool::resetForTesting(
      [](const char *symbol, unsigned version) -> void * {
        if (std::string(symbol) == "cuGreenCtxCreate")
          return nullptr;
        return smpart::detail::green::runtimeResolver()(symbol, version);
      });
  testing::internal::CaptureStderr();
  std::shared_ptr<smpart::Partition> a, b;
  const smpart::Status sa = smpart::Partition::open("gpu_fallback_a", {}, a);
  const smpart::Status sb = smpart::Partition::open("gpu_fallback_b", {}, b);
  const std::string err = testing::internal::GetCapturedStderr();
  ASSERT_TRUE(sa.ok() && sb.ok()) << sa.message() << sb.message();
  EXPECT_FALSE(a->confined());
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_NE(err.find("cuGreenCtxCreate"), std::string::npos) << err;
  SmRecord r;
  r.alloc();
  r.launch(a->stream(), 8 * info_.num_sms, 2000);
  CHECK_CUDA(syncStream(a->currentStream()));
  EXPECT_FALSE(r.ids().empty());
  // Refused kernels then run on the caller's stream, unconfined, also on
  // a partition opened under their name (which launchConfined uses).
  std::shared_ptr<smpart::Partition> named;
  ASSERT_TRUE(smpart::Partition::open("gpu_fallback_refused", {}, named).ok());
  ASSERT_TRUE(named);
  EXPECT_FALSE(named->confined());
  cudaStream_t user;
  CHECK_CUDA(cudaStreamCreateWithFlags(&user, cudaStreamNonBlocking));
  cudaStream_t used = nullptr;
  smpart::KernelHandle h = smpart::launchConfined(
      {"gpu_fallback_refused", reinterpret_cast<const void *>(&recordSms)},
      dim3(1), dim3(128), 0, user,
      [&](dim3 g, dim3 bl, std::size_t sm, cudaStream_t s) {
        used = s;
        recordSms<<<g, bl, sm, s>>>(r.dev, 0, r.finished(), 0, r.violations());
      });
  EXPECT_TRUE(h.status().ok()) << h.status().message();
  CHECK_CUDA(syncStream(user));
  EXPECT_EQ(used, user);
}

} // namespace
