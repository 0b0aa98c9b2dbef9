// GPU tests (label gpu): every kernel of test_inputs/ gives the same results
// rewritten as original. Each file is compiled twice by nvcc into this
// binary, the original in namespace gpu_orig_<file> and the smpart-transform
// output in gpu_xf_<file> (see CMakeLists.txt); the test calls the file's own
// host launchers in both (the rewritten ones go through smpart::launch) on
// the same inputs, synchronises the device, and compares the outputs:
// integers exactly, floats to 1e-5 relative (the two compilations may
// contract multiply-adds differently). Sizes give the launchers enough
// blocks to keep every SM busy and the rewritten CTAs looping.
//
// Not here: OptionPricer::price_grid in black_scholes.cu, a static member
// kernel, which nvcc rejects (the file hides it from nvcc with
// #if !defined(__NVCC__)); its rewritten form runs in the CPU emulation
// (emulation_inputs_test). Without a GPU every test skips with the reason.
// Waits have deadlines (bounded_wait.hpp): a kernel that never finishes
// fails its test instead of hanging the run.
#include "gpu_inputs.hpp"
#include "gpu_test_checks.hpp"
#include "smpart/runtime.hpp"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace {

// The same launcher call in the original and in the rewritten file.
#define BOTH(file, ...)                                                        \
  [&] { gpu_orig_##file::__VA_ARGS__; }, [&] { gpu_xf_##file::__VA_ARGS__; }

/// A device array with a host image.
template <class T> struct Dev {
  T *p = nullptr;
  std::size_t n = 0;
  explicit Dev(std::size_t count) : n(count) {
    EXPECT_EQ(cudaMalloc(&p, std::max<std::size_t>(n, 1) * sizeof(T)),
              cudaSuccess);
  }
  Dev(const Dev &) = delete;
  Dev &operator=(const Dev &) = delete;
  ~Dev() { cudaFree(p); }
  void put(const std::vector<T> &v) {
    ASSERT_EQ(v.size(), n);
    ASSERT_EQ(cudaMemcpy(p, v.data(), n * sizeof(T), cudaMemcpyHostToDevice),
              cudaSuccess);
  }
  void fill(T v) { put(std::vector<T>(n, v)); }
  std::vector<T> get() const {
    std::vector<T> v(n);
    EXPECT_EQ(cudaMemcpy(v.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost),
              cudaSuccess);
    return v;
  }
  operator T *() const { return p; }
};

void append(std::vector<double> &d, float v) { d.push_back(v); }
void append(std::vector<double> &d, int v) { d.push_back(v); }
void append(std::vector<double> &d, unsigned v) { d.push_back(v); }
void append(std::vector<double> &d, float2 v) {
  d.push_back(v.x);
  d.push_back(v.y);
}
void append(std::vector<double> &d, float4 v) {
  d.push_back(v.x);
  d.push_back(v.y);
  d.push_back(v.z);
  d.push_back(v.w);
}

/// Outputs of one run: named arrays flattened to doubles; floats are
/// compared with a tolerance, integers exactly.
struct Outputs {
  std::vector<std::string> names;
  std::vector<std::vector<double>> values;
  std::vector<bool> is_float;
  template <class T> Outputs &add(const std::string &name, const Dev<T> &d) {
    return add(name, d.get());
  }
  template <class T>
  Outputs &add(const std::string &name, const std::vector<T> &v) {
    std::vector<double> flat;
    for (const T &e : v)
      append(flat, e);
    names.push_back(name);
    values.push_back(std::move(flat));
    is_float.push_back(!std::is_integral<T>::value);
    return *this;
  }
};

std::vector<float> ramp(std::size_t n, float scale) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = static_cast<float>((i * 7) % 23) * scale;
  return v;
}

std::vector<int> iramp(std::size_t n, int mod, int shift) {
  std::vector<int> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = static_cast<int>((i * 37) % mod) - shift;
  return v;
}

class GpuInputs : public ::testing::Test {
protected:
  void SetUp() override {
    // The runtime's own check: it names the failing call and CUDA's reason.
    if (const smpart::Status st = smpart::init(); !st.ok())
      GTEST_SKIP() << st.message();
    // Below ctest's 45 s: bounds the waits inside the files' own launchers
    // (bfs_frontier.cu synchronises the device itself).
    watchdog_ = smpart_test::watchCurrentTest();
    ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking),
              cudaSuccess);
  }
  void TearDown() override {
    if (s)
      cudaStreamDestroy(s);
    watchdog_.reset();
  }

  /// cudaDeviceSynchronize with a deadline: the launchers use `s` and the
  /// default stream, and the runtime completes a rewritten kernel on the
  /// stream it was launched on.
  cudaError_t sync() { return smpart_test::syncStreams({s, 0}); }

  /// reset(); original(); outputs() against reset(); rewritten(); outputs().
  void compare(const std::function<void()> &reset,
               const std::function<void()> &original,
               const std::function<void()> &rewritten,
               const std::function<Outputs()> &outputs) {
    // A pageable copy may return before its DMA is done, and the legacy
    // stream is not ordered with the non-blocking `s`.
    reset();
    ASSERT_EQ(sync(), cudaSuccess) << "reset";
    original();
    ASSERT_EQ(sync(), cudaSuccess) << "original";
    ASSERT_EQ(cudaGetLastError(), cudaSuccess) << "original";
    const Outputs want = outputs();
    reset();
    ASSERT_EQ(sync(), cudaSuccess) << "reset";
    rewritten();
    ASSERT_EQ(sync(), cudaSuccess) << "rewritten";
    const smpart::Status st = smpart::getLastError();
    ASSERT_TRUE(st.ok()) << "rewritten: " << st.message();
    ASSERT_EQ(cudaGetLastError(), cudaSuccess) << "rewritten";
    const Outputs got = outputs();
    ASSERT_EQ(want.values.size(), got.values.size());
    for (std::size_t o = 0; o < want.values.size(); ++o) {
      const std::vector<double> &w = want.values[o], &g = got.values[o];
      ASSERT_EQ(w.size(), g.size()) << want.names[o];
      const double tol = want.is_float[o] ? 1e-5 : 0.0;
      for (std::size_t i = 0; i < w.size(); ++i) {
        const bool both_nan = std::isnan(w[i]) && std::isnan(g[i]);
        ASSERT_TRUE(both_nan || std::fabs(w[i] - g[i]) <=
                                    tol * std::max(1.0, std::fabs(w[i])))
            << want.names[o] << "[" << i << "]: rewritten " << g[i]
            << ", original " << w[i];
      }
    }
  }

  cudaStream_t s = nullptr;
  std::unique_ptr<smpart_test::Watchdog> watchdog_;
};

// --- vector_ops.cu ---------------------------------------------------------

TEST_F(GpuInputs, VectorOps) {
  const int n = (1 << 22) + 77;
  Dev<float> x(n), y(n), off(13), out(n);
  x.put(ramp(n, 0.5f));
  off.put(ramp(13, 0.25f));
  compare([&] { y.put(ramp(n, 1.f)); },
          BOTH(vector_ops, launch_saxpy(n, 2.f, x, y, s)),
          [&] { return Outputs().add("y", y); });
  compare([&] { out.fill(-1.f); },
          BOTH(vector_ops, launch_vector_add(x, y, out, n)),
          [&] { return Outputs().add("c", out); });
  compare([&] { out.fill(-1.f); },
          BOTH(vector_ops, launch_scale_offset(x, off, 13, 3.f, out, n)),
          [&] { return Outputs().add("out", out); });
  compare([&] { out.fill(-1.f); }, // period 0: the second early return
          BOTH(vector_ops, launch_scale_offset(x, off, 0, 3.f, out, n)),
          [&] { return Outputs().add("out", out); });
}

// --- sgemm_tiled.cu --------------------------------------------------------

TEST_F(GpuInputs, Sgemm) {
  const int M = 1000, N = 777, K = 300;
  Dev<float> A(M * K), B(K * N), C(M * N);
  A.put(ramp(M * K, 0.01f));
  B.put(ramp(K * N, 0.02f));
  compare(
      [&] { C.put(ramp(M * N, 1.f)); },
      BOTH(sgemm_tiled, launch_sgemm_tiled(M, N, K, 1.5f, A, B, 0.5f, C, s)),
      [&] { return Outputs().add("C", C); });
  compare([&] { C.put(ramp(M * N, 1.f)); },
          BOTH(sgemm_tiled, launch_sgemm_naive(M, N, K, 1.5f, A, B, 0.5f, C)),
          [&] { return Outputs().add("C", C); });
}

// --- stencil2d.cu ----------------------------------------------------------

TEST_F(GpuInputs, Stencil2d) {
  const int nx = 2000, ny = 1500;
  Dev<float> in(nx * ny), out(nx * ny);
  Dev<int> changed(1);
  in.put(ramp(nx * ny, 1.f));
  compare([&] { out.fill(-1.f); },
          BOTH(stencil2d, launch_jacobi5_shared(in, out, nx, ny, 0.8f)),
          [&] { return Outputs().add("out", out); });
  compare([&] { out.fill(-1.f); },
          BOTH(stencil2d, launch_jacobi5_global(in, out, nx, ny, 0.8f, s)),
          [&] { return Outputs().add("out", out); });
  out.put(ramp(nx * ny, 1.1f));
  compare([&] { changed.fill(0); },
          BOTH(stencil2d,
               launch_jacobi_count_changed(in, out, nx * ny, 1.f, changed)),
          [&] { return Outputs().add("changed", changed); });
}

// --- reduction.cu ----------------------------------------------------------

TEST_F(GpuInputs, Reduction) {
  const int n = (1 << 22) + 5, block = 256;
  const int grid = (n + 2 * block - 1) / (2 * block);
  Dev<float> in(n), partial(grid), total(1);
  Dev<int> iin(n), result(1);
  in.put(ramp(n, 0.001f));
  iin.put(iramp(n, 1000003, 500000));
  int blocks[2] = {0, 0};
  compare(
      [&] {
        partial.fill(-1.f);
        total.fill(-1.f);
      },
      [&] {
        blocks[0] =
            gpu_orig_reduction::launch_reduce_sum(in, partial, n, block, s);
        ASSERT_EQ(smpart_test::syncStream(s), cudaSuccess);
        // Two-pass: the second pass over the first pass's partial sums
        // (at most 1024 of them fit one block; fold the first 1024).
        gpu_orig_reduction::launch_reduce_sum_final(partial, total,
                                                    std::min(grid, 1024));
      },
      [&] {
        blocks[1] =
            gpu_xf_reduction::launch_reduce_sum(in, partial, n, block, s);
        ASSERT_EQ(smpart_test::syncStream(s), cudaSuccess);
        gpu_xf_reduction::launch_reduce_sum_final(partial, total,
                                                  std::min(grid, 1024));
      },
      [&] { return Outputs().add("partial", partial).add("total", total); });
  EXPECT_EQ(blocks[0], blocks[1]);
  compare([&] { result.fill(INT_MAX); },
          BOTH(reduction, launch_reduce_min_int(iin, n, result, s)),
          [&] { return Outputs().add("min", result); });
}

// --- histogram.cu ----------------------------------------------------------

TEST_F(GpuInputs, Histogram) {
  const int n = 1 << 24, nbins = 100;
  std::vector<unsigned char> bytes(n);
  for (int i = 0; i < n; ++i)
    bytes[i] = static_cast<unsigned char>((i * 131u + i / 7) % 256u);
  Dev<unsigned char> data(n);
  data.put(bytes);
  Dev<unsigned> bins(256);
  std::vector<float> vals = ramp(n, 0.5f);
  for (int i = 0; i < n; i += 101)
    vals[i] = std::nanf("");
  Dev<float> values(n);
  values.put(vals);
  Dev<int> rbins(nbins), outliers(1);
  compare([&] { bins.fill(0u); },
          BOTH(histogram, launch_histogram256(data, n, bins, 1000)),
          [&] { return Outputs().add("bins", bins); });
  compare(
      [&] {
        rbins.fill(0);
        outliers.fill(0);
      },
      BOTH(histogram, launch_histogram_range(values, n, 1.f, 10.f, nbins, rbins,
                                             outliers, s)),
      [&] { return Outputs().add("bins", rbins).add("outliers", outliers); });
}

// --- nbody.cu --------------------------------------------------------------

TEST_F(GpuInputs, Nbody) {
  const int n = 30000;
  std::vector<float4> p(n), v(n);
  for (int i = 0; i < n; ++i) {
    p[i] = make_float4((i * 7) % 23 * 0.5f, (i * 5) % 17 * 0.5f,
                       (i * 3) % 11 * 0.5f, 1.f + i % 4);
    v[i] = make_float4((i % 5) * 0.1f, (i % 7) * 0.1f, (i % 3) * 0.1f, 0.f);
  }
  Dev<float4> pos(n), vel(n), acc(n);
  Dev<float2> energy(n);
  compare(
      [&] {
        pos.put(p);
        acc.fill(make_float4(-1, -1, -1, -1));
      },
      BOTH(nbody, launch_nbody_forces(pos, acc, n, 0.01f, s)),
      [&] { return Outputs().add("acc", acc); });
  compare(
      [&] {
        pos.put(p);
        vel.put(v);
      },
      BOTH(nbody, launch_nbody_integrate(pos, vel, acc, n, 0.01f, 0.99f, s)),
      [&] { return Outputs().add("pos", pos).add("vel", vel); });
  compare([&] { energy.fill(make_float2(-1, -1)); },
          BOTH(nbody, launch_nbody_energy(pos, vel, energy, n)),
          [&] { return Outputs().add("energy", energy); });
}

// --- black_scholes.cu (black_scholes; price_grid is Clang-only) -----------

TEST_F(GpuInputs, BlackScholes) {
  const int n = (1 << 22) + 3;
  std::vector<float> st(n), k(n), t(n);
  for (int i = 0; i < n; ++i) {
    st[i] = 5.f + (i * 7) % 26;
    k[i] = 1.f + (i * 11) % 100;
    t[i] = i % 9 == 0 ? 0.f : 0.25f * (1 + i % 40);
  }
  Dev<float> stock(n), strike(n), years(n), call(n), put(n);
  stock.put(st);
  strike.put(k);
  years.put(t);
  compare(
      [&] {
        call.fill(-1.f);
        put.fill(-1.f);
      },
      BOTH(black_scholes, launch_black_scholes(call, put, stock, strike, years,
                                               0.02f, 0.3f, n)),
      [&] { return Outputs().add("call", call).add("put", put); });
}

// --- spmv_csr.cu -----------------------------------------------------------

TEST_F(GpuInputs, SpmvCsr) {
  const int rows = 1 << 20, cols = 50000;
  std::vector<int> rp{0}, ci;
  std::vector<float> va;
  for (int r = 0; r < rows; ++r) {
    const int len = r % 5 == 0 ? 0 : 1 + (r * 7) % 12;
    for (int j = 0; j < len; ++j) {
      ci.push_back((r * 13 + j * 2909) % cols);
      va.push_back(0.25f * ((r + j) % 9) - 1.f);
    }
    rp.push_back(static_cast<int>(ci.size()));
  }
  Dev<int> row_ptr(rp.size()), col_idx(ci.size()), lengths(rows), empty(1);
  Dev<float> vals(va.size()), x(cols), y(rows);
  row_ptr.put(rp);
  col_idx.put(ci);
  vals.put(va);
  x.put(ramp(cols, 0.5f));
  compare([&] { y.fill(-1.f); },
          BOTH(spmv_csr,
               launch_spmv_csr_scalar(rows, row_ptr, col_idx, vals, x, y, s)),
          [&] { return Outputs().add("y", y); });
  compare([&] { y.put(ramp(rows, 2.f)); },
          BOTH(spmv_csr, sparse::launch_spmv_csr_axpby(
                             rows, 1.5f, row_ptr, col_idx, vals, x, 0.5f, y)),
          [&] { return Outputs().add("y", y); });
  compare(
      [&] {
        lengths.fill(-1);
        empty.fill(0);
      },
      BOTH(spmv_csr, launch_csr_row_lengths(rows, row_ptr, lengths, empty)),
      [&] { return Outputs().add("lengths", lengths).add("empty", empty); });
}

// --- kmeans_assign.cu ------------------------------------------------------

TEST_F(GpuInputs, Kmeans) {
  const int n = 1 << 20, k = 16, dim = 8;
  Dev<float> points(size_t(n) * dim), centroids(k * dim);
  Dev<int> membership(n), changed(1), counts(k);
  points.put(ramp(size_t(n) * dim, 0.5f));
  centroids.put(ramp(k * dim, 1.3f));
  std::vector<int> m0(n);
  for (int i = 0; i < n; ++i)
    m0[i] = i % 3 == 0 ? i % k : 0;
  compare(
      [&] {
        membership.put(m0);
        changed.fill(0);
      },
      BOTH(kmeans_assign, launch_kmeans_assign(points, centroids, n, k, dim,
                                               membership, changed, s)),
      [&] {
        return Outputs().add("membership", membership).add("changed", changed);
      });
  std::vector<int> m1(n);
  for (int i = 0; i < n; ++i)
    m1[i] = (i * 7) % (k + 2) - 1; // some out of range
  membership.put(m1);
  compare([&] { counts.fill(0); },
          BOTH(kmeans_assign, launch_kmeans_count(membership, n, k, counts)),
          [&] { return Outputs().add("counts", counts); });
  compare([&] { centroids.fill(-1.f); },
          BOTH(kmeans_assign, launch_kmeans_update(points, membership, 20000, k,
                                                   dim, centroids)),
          [&] { return Outputs().add("centroids", centroids); });
}

// --- bfs_frontier.cu -------------------------------------------------------

TEST_F(GpuInputs, Bfs) {
  const int n = 1 << 20;
  std::vector<int> off{0}, adj;
  for (int v = 0; v < n; ++v) {
    for (int j = 0; j < v % 5; ++j)
      adj.push_back(static_cast<int>((v * 31ll + j * 7919ll + 1) % n));
    off.push_back(static_cast<int>(adj.size()));
  }
  Dev<int> offsets(off.size()), cols(adj.size()), levels(n), frontier(n),
      next(n), count(1);
  offsets.put(off);
  cols.put(adj);
  std::vector<int> lv(n, -1), fr(n, 0);
  for (int v = 0; v < n; v += 7) {
    fr[v] = 1;
    lv[v] = 1;
  }
  compare(
      [&] {
        levels.fill(7);
        frontier.fill(7);
        next.fill(7);
      },
      BOTH(bfs_frontier, launch_bfs_init(n, 42, levels, frontier, next)),
      [&] {
        return Outputs()
            .add("levels", levels)
            .add("frontier", frontier)
            .add("next", next);
      });
  compare(
      [&] {
        levels.put(lv);
        frontier.put(fr);
        next.fill(0);
        count.fill(0);
      },
      BOTH(bfs_frontier, launch_bfs_expand(n, offsets, cols, frontier, next,
                                           levels, 1, count, s)),
      [&] {
        return Outputs()
            .add("levels", levels)
            .add("next", next)
            .add("count", count);
      });
  compare(
      [&] {
        frontier.put(fr);
        next.put(lv);
      },
      BOTH(bfs_frontier, launch_bfs_advance(n, frontier, next, s)),
      [&] { return Outputs().add("frontier", frontier).add("next", next); });
  // The whole host driver: a launch per level, cudaMemcpyAsync in between.
  // From vertex 1: vertex 0 has no edges (degree v % 5), a search of depth 0.
  const int source = 1;
  int depth[2] = {-2, -2};
  compare([] {},
          [&] {
            depth[0] = gpu_orig_bfs_frontier::bfs_run(
                n, offsets, cols, source, levels, frontier, next, count, s);
          },
          [&] {
            depth[1] = gpu_xf_bfs_frontier::bfs_run(
                n, offsets, cols, source, levels, frontier, next, count, s);
          },
          [&] { return Outputs().add("levels", levels); });
  EXPECT_GT(depth[0], 0);
  EXPECT_EQ(depth[0], depth[1]);
}

// --- template_kernel.cu ----------------------------------------------------

TEST_F(GpuInputs, TemplateKernels) {
  const int n = (1 << 22) + 9;
  Dev<float> x(n), y(n), sums((n + 127) / 128);
  Dev<int> ix(n), iy(n), isums((n + 127) / 128);
  x.put(ramp(n, 0.5f));
  ix.put(iramp(n, 101, 50));
  compare([&] { sums.fill(-1.f); },
          BOTH(template_kernel, launch_block_sum_f32(x, sums, n, s)),
          [&] { return Outputs().add("sums", sums.get()); });
  compare([&] { isums.fill(-1); },
          BOTH(template_kernel, launch_block_sum_i32(ix, isums, n)),
          [&] { return Outputs().add("sums", isums); });
  compare([&] { y.put(ramp(n, 2.f)); },
          BOTH(template_kernel, launch_axpby_f32(1.5f, x, -0.5f, y, n)),
          [&] { return Outputs().add("y", y); });
  compare([&] { iy.put(iramp(n, 29, 0)); },
          BOTH(template_kernel, launch_axpby_i32(3, ix, -2, iy, n)),
          [&] { return Outputs().add("y", iy); });
  compare([&] { y.fill(-1.f); },
          BOTH(template_kernel, launch_clamp_copy(x, y, 2.f, 8.f, n, s)),
          [&] { return Outputs().add("out", y); });
}

// --- grid_stride.cu --------------------------------------------------------

TEST_F(GpuInputs, GridStride) {
  const int n = (1 << 23) + 11;
  Dev<float> x(n), y(n);
  Dev<unsigned> count(1);
  x.put(ramp(n, 0.5f));
  compare([&] { y.put(ramp(n, 1.f)); },
          BOTH(grid_stride, launch_saxpy_grid_stride(n, 2.f, x, y, s)),
          [&] { return Outputs().add("y", y); });
  compare([&] { y.put(ramp(n, 0.01f)); },
          BOTH(grid_stride, launch_scale_clamp(y, n, 5.f)),
          [&] { return Outputs().add("data", y); });
  compare([&] { y.put(ramp(n, 0.01f)); },
          BOTH(grid_stride, launch_scale_clamp_range(y, n, 5.f, 0.2f, 0.8f)),
          [&] { return Outputs().add("data", y); });
  const int rows = 1500, cols = 2000, ld_in = 2048, ld_out = 2001;
  Dev<float> in(size_t(rows) * ld_in), out(size_t(rows) * ld_out);
  in.put(ramp(size_t(rows) * ld_in, 1.f));
  compare([&] { out.fill(-1.f); },
          BOTH(grid_stride,
               launch_copy2d_grid_stride(in, out, rows, cols, ld_in, ld_out)),
          [&] { return Outputs().add("out", out); });
  compare([&] { count.fill(0u); },
          BOTH(grid_stride, launch_count_above(x, n, 5.f, count)),
          [&] { return Outputs().add("count", count); });
  compare(
      [&] { count.fill(0u); }, // 64 blocks of 128 over 3000: idle blocks return
      BOTH(grid_stride, launch_count_above(x, 3000, 5.f, count)),
      [&] { return Outputs().add("count", count); });
}

// --- block_helper.cu -------------------------------------------------------

TEST_F(GpuInputs, BlockHelper3d) {
  const dim3 grid(30, 20, 10), block(8, 4, 2);
  const unsigned blocks = 30 * 20 * 10, threads = 64;
  Dev<unsigned> thread_block(blocks * threads), coords(3 * blocks), info(2);
  compare(
      [&] {
        thread_block.fill(~0u);
        coords.fill(~0u);
        info.fill(0u);
      },
      BOTH(block_helper,
           launch_record_block_ids(grid, block, thread_block, coords, info, s)),
      [&] {
        return Outputs()
            .add("thread_block", thread_block)
            .add("coords", coords)
            .add("info", info);
      });
  const int nx = 300, ny = 200, nz = 100;
  Dev<float> in(nx * ny * nz), out(nx * ny * nz);
  in.put(ramp(nx * ny * nz, 1.f));
  compare([&] { out.fill(-1.f); },
          BOTH(block_helper, launch_volume_scale3d(in, out, nx, ny, nz, 1.5f)),
          [&] { return Outputs().add("out", out); });
  compare([&] { out.fill(-1.f); },
          BOTH(block_helper, launch_laplacian3d(in, out, nx, ny, nz, s)),
          [&] { return Outputs().add("out", out); });
  const int n = 1 << 20;
  Dev<unsigned> staged_in(n), staged_out(n);
  std::vector<unsigned> values(n);
  for (int i = 0; i < n; ++i)
    values[i] = static_cast<unsigned>(i);
  staged_in.put(values);
  compare(
      [&] { staged_out.fill(~0u); },
      BOTH(block_helper, launch_staged_by_pointer(staged_in, staged_out, n, s)),
      [&] { return Outputs().add("out", staged_out); });
}

// --- transpose.cu ----------------------------------------------------------

TEST_F(GpuInputs, Transpose) {
  const int w = 3000, h = 2001;
  Dev<float> in(w * h), out(w * h);
  in.put(ramp(w * h, 1.f));
  compare([&] { out.fill(-1.f); },
          BOTH(transpose, launch_transpose_tiled(in, out, w, h, s)),
          [&] { return Outputs().add("out", out); });
  compare([&] { out.fill(-1.f); },
          BOTH(transpose, launch_transpose_naive(in, out, w, h)),
          [&] { return Outputs().add("out", out); });
}

// --- prefix_scan.cu --------------------------------------------------------

TEST_F(GpuInputs, PrefixScan) {
  const int n = (1 << 20) + 3, block = 256;
  const int grid = (n + 2 * block - 1) / (2 * block);
  Dev<int> in(n), out(n), sums(grid), scanned(grid);
  in.put(iramp(n, 13, 3));
  int grids[2] = {0, 0};
  compare(
      [&] {
        out.fill(-1);
        sums.fill(-1);
      },
      [&] {
        grids[0] = gpu_orig_prefix_scan::launch_scan_block_exclusive(
            in, out, sums, n, block, s);
      },
      [&] {
        grids[1] = gpu_xf_prefix_scan::launch_scan_block_exclusive(
            in, out, sums, n, block, s);
      },
      [&] { return Outputs().add("out", out).add("block_sums", sums); });
  EXPECT_EQ(grids[0], grids[1]);
  std::vector<int> sc(grid);
  for (int b = 0, acc = 0; b < grid; ++b) {
    sc[b] = acc;
    acc += (b * 97) % 1000;
  }
  scanned.put(sc);
  compare([&] { out.put(iramp(n, 11, 0)); },
          BOTH(prefix_scan, launch_scan_add_offsets(out, scanned, n, block, s)),
          [&] { return Outputs().add("out", out); });
}

} // namespace
