// SMPART_DISABLE=1 against the CUDA stand-in of fake_cuda.hpp: a rewritten
// launch whose closure can launch the original kernel (the tool kept its
// original definition) is that original launch, unchanged and in stream
// order, and nothing else of libsmpart reaches CUDA. ctest runs this binary
// with SMPART_DISABLE=1, which the runtime reads once per process.
#include "fake_cuda.hpp"

#include "smpart/runtime.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

namespace {

/// The addresses the fake knows the kernels by.
void originalKernel() {}
void rewrittenKernel() {}
void marker() {}

struct Recorded {
  std::mutex mu;
  std::vector<std::string> order; ///< kernels, as they start
  dim3 grid, block;               ///< the original kernel's configuration
  float *data = nullptr;          ///< and its argument
  std::atomic<bool> hold{false};  ///< markers stay unfinished meanwhile
  void add(std::string what) {
    std::lock_guard<std::mutex> lock(mu);
    order.push_back(std::move(what));
  }
};
Recorded rec;

void registerKernels() {
  fake_cuda::registerKernel(reinterpret_cast<const void *>(&originalKernel),
                            [](void **args, dim3 grid, dim3 block) {
                              float *data = *static_cast<float **>(args[0]);
                              fake_cuda::KernelRun r;
                              r.start = [grid, block, data] {
                                rec.grid = grid;
                                rec.block = block;
                                rec.data = data;
                                rec.add("original");
                              };
                              return r;
                            });
  fake_cuda::registerKernel(reinterpret_cast<const void *>(&rewrittenKernel),
                            [](void **, dim3, dim3) {
                              fake_cuda::KernelRun r;
                              r.start = [] { rec.add("rewritten"); };
                              return r;
                            });
  fake_cuda::registerKernel(
      reinterpret_cast<const void *>(&marker), [](void **args, dim3, dim3) {
        const int id = *static_cast<int *>(args[0]);
        fake_cuda::KernelRun r;
        r.start = [id] { rec.add("marker " + std::to_string(id)); };
        r.held = [] { return rec.hold.load(); };
        return r;
      });
}

void launchMarker(int id, cudaStream_t s) {
  void *args[] = {&id};
  ASSERT_EQ(cudaLaunchKernel(reinterpret_cast<const void *>(&marker), dim3(1),
                             dim3(32), args, 0, s),
            cudaSuccess);
}

/// What the closure was asked to do.
struct Asked {
  unsigned calls = 0;
  smpart::LaunchParams last{};
};

/// The closure smpart-transform writes for a kernel whose original is
/// kept: `if (p.original) k<<<...>>>(args...); else k<<<...>>>(p.ctl,
/// args...);`, with cudaLaunchKernel in place of <<<>>>.
smpart::Relaunch closureFor(float *data, Asked &asked) {
  return [args = std::make_tuple(data), &asked](const smpart::LaunchParams &p) {
    ++asked.calls;
    asked.last = p;
    std::apply(
        [&](auto a) {
          if (p.original) {
            void *argv[] = {&a};
            cudaLaunchKernel(reinterpret_cast<const void *>(&originalKernel),
                             p.grid, p.block, argv, p.smem, p.stream);
          } else {
            smpart::LaunchControl ctl = p.ctl;
            void *argv[] = {&ctl, &a};
            cudaLaunchKernel(reinterpret_cast<const void *>(&rewrittenKernel),
                             p.grid, p.block, argv, p.smem, p.stream);
          }
        },
        args);
  };
}

TEST(Disabled, LaunchIsTheOriginalLaunchInStreamOrder) {
  ASSERT_STREQ(std::getenv("SMPART_DISABLE"), "1")
      << "run through ctest, which sets SMPART_DISABLE=1";
  fake_cuda::reset(4);
  registerKernels();
  cudaStream_t s = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  float data[4] = {};
  Asked asked;

  rec.hold = true;
  launchMarker(1, s);
  const smpart::KernelHandle h =
      smpart::launch({"k", nullptr, true}, dim3(7, 2), dim3(96), 256, s,
                     closureFor(data, asked));
  launchMarker(2, s);

  // The closure launched the original kernel with the original
  // configuration; the runtime kept no handle and made no set-up call.
  EXPECT_FALSE(h.valid());
  ASSERT_EQ(asked.calls, 1u);
  EXPECT_TRUE(asked.last.original);
  EXPECT_EQ(asked.last.grid.x, 7u);
  EXPECT_EQ(asked.last.grid.y, 2u);
  EXPECT_EQ(asked.last.block.x, 96u);
  EXPECT_EQ(asked.last.smem, 256u);
  EXPECT_EQ(asked.last.stream, s);
  EXPECT_EQ(fake_cuda::probeLaunches(), 0u);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);

  // Stream order: behind the held marker, before the next one.
  {
    std::lock_guard<std::mutex> lock(rec.mu);
    EXPECT_EQ(rec.order, std::vector<std::string>({"marker 1"}));
  }
  rec.hold = false;
  fake_cuda::pump();
  std::lock_guard<std::mutex> lock(rec.mu);
  EXPECT_EQ(rec.order,
            std::vector<std::string>({"marker 1", "original", "marker 2"}));
  EXPECT_EQ(rec.grid.x, 7u);
  EXPECT_EQ(rec.grid.y, 2u);
  EXPECT_EQ(rec.block.x, 96u);
  EXPECT_EQ(rec.data, data);
}

} // namespace
