// test_inputs/ kernels in the CPU emulation: the original file and its
// smpart-transform output run side by side; the rewritten form must match
// the original under 1000 seeded schedules per kernel (preemption, resume,
// growth, SM masks, CTAs per SM, bypass counts changing at random).
//
// Every kernel of every test_inputs/ file is covered (the tool transforms
// all 39; none is refused); their declarations come from the table
// test_inputs/inputs.def. Template kernels run as the instances listed in
// inputs/template_kernel.entries.inc, the static member kernel
// OptionPricer::price_grid (Clang only on the GPU; the host compiler takes
// it) through inputs/black_scholes.entries.inc. Grids are small so that the
// whole test stays within seconds: cost grows with threads x schedules.
#include "emulation_harness.hpp"

#include "smpart/control.hpp"

#include <climits>
#include <initializer_list>
#include <numeric>

using smpart::LaunchControl;

// Every kernel of the table, original and rewritten; the rewritten form
// takes the control block first.
#define SMPART_UNPAREN(...) __VA_ARGS__
#define SMPART_INPUT_KERNEL(file, kernel, params)                              \
  namespace emu_orig_##file {                                                  \
    void kernel params;                                                        \
  }                                                                            \
  namespace emu_xf_##file {                                                    \
    void kernel(LaunchControl, SMPART_UNPAREN params);                         \
    void kernel params;                                                        \
  }
#define SMPART_INPUT_KERNEL_NS(file, ns, kernel, params)                       \
  namespace emu_orig_##file::ns {                                              \
    void kernel params;                                                        \
  }                                                                            \
  namespace emu_xf_##file::ns {                                                \
    void kernel(LaunchControl, SMPART_UNPAREN params);                         \
    void kernel params;                                                        \
  }
#include "inputs.def"

namespace {

using smpart::emu::asDoubles;
using smpart::emu::KernelCase;

// The original and rewritten calls of one kernel with the same arguments.
#define SMPART_CASE(file, kernel, ...)                                         \
  k.original = [&] { emu_orig_##file::kernel(__VA_ARGS__); };                  \
  k.transformed = [&](const LaunchControl &smpart_c) {                         \
    emu_xf_##file::kernel(smpart_c, __VA_ARGS__);                              \
  }
// And the original the rewritten file keeps (what SMPART_DISABLE=1 runs),
// for kernels that keep one: not those whose device functions read
// blockIdx, nor the entries of template and member kernels.
#define SMPART_CASE_KEPT(file, kernel, ...)                                    \
  SMPART_CASE(file, kernel, __VA_ARGS__);                                      \
  k.kept = [&] { emu_xf_##file::kernel(__VA_ARGS__); }

const unsigned kSchedules = smpart::emu::schedulesFromEnv(1000);

void run(const KernelCase &k) {
  EXPECT_EQ(smpart::emu::runProperty(k, kSchedules), kSchedules);
}

std::vector<float> ramp(std::size_t n, float scale) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = static_cast<float>((i * 7) % 23) * scale;
  return v;
}

TEST(TestInputs, Saxpy) {
  const int n = 700;
  std::vector<float> x, y;
  KernelCase k{"vector_ops.cu saxpy", dim3(3), dim3(256)};
  k.reset = [&] {
    x = ramp(n, 0.5f);
    y = ramp(n, 1.0f);
  };
  SMPART_CASE_KEPT(vector_ops, saxpy, n, 2.0f, x.data(), y.data());
  k.outputs = [&] { return asDoubles(y); };
  run(k);
}

TEST(TestInputs, VectorAdd) {
  const int n = 500;
  std::vector<float> a, b, c;
  KernelCase k{"vector_ops.cu vector_add", dim3(4), dim3(128)};
  k.reset = [&] {
    a = ramp(n, 1.f);
    b = ramp(n, 3.f);
    c.assign(n, 0.f);
  };
  SMPART_CASE_KEPT(vector_ops, vector_add, a.data(), b.data(), c.data(), n);
  k.outputs = [&] { return asDoubles(c); };
  run(k);
}

TEST(TestInputs, ReduceSumExternShared) {
  const int n = 1000, block = 64, grid = (n + 2 * block - 1) / (2 * block);
  std::vector<float> in, partial;
  KernelCase k{"reduction.cu reduce_sum", dim3(grid), dim3(block)};
  k.dynamic_smem = block * sizeof(float);
  k.reset = [&] {
    in = ramp(n, 1.f);
    partial.assign(grid, -1.f);
  };
  SMPART_CASE_KEPT(reduction, reduce_sum, in.data(), partial.data(), n);
  k.outputs = [&] { return asDoubles(partial); };
  run(k);
}

TEST(TestInputs, ReduceMinIntGridStride) {
  const int n = 900;
  std::vector<int> in;
  int result = 0;
  KernelCase k{"reduction.cu reduce_min_int", dim3(3), dim3(64)};
  k.dynamic_smem = 64 * sizeof(int);
  k.reset = [&] {
    in.resize(n);
    for (int i = 0; i < n; ++i)
      in[i] = 1000 - (i * 37) % 911;
    result = INT_MAX;
  };
  SMPART_CASE_KEPT(reduction, reduce_min_int, in.data(), n, &result);
  k.outputs = [&] { return std::vector<double>{double(result)}; };
  run(k);
}

TEST(TestInputs, Histogram256SharedAtomics) {
  const int n = 3000;
  std::vector<unsigned char> data;
  std::vector<unsigned int> bins;
  KernelCase k{"histogram.cu histogram256", dim3(3), dim3(256)};
  k.reset = [&] {
    data.resize(n);
    for (int i = 0; i < n; ++i)
      data[i] = static_cast<unsigned char>((i * 131) % 256);
    bins.assign(256, 0);
  };
  SMPART_CASE_KEPT(histogram, histogram256, data.data(), n, bins.data());
  k.outputs = [&] { return asDoubles(bins); };
  run(k);
}

TEST(TestInputs, TransposeTiled) {
  const int w = 40, h = 70;
  std::vector<float> in, out;
  KernelCase k{"transpose.cu transpose_tiled",
               dim3((w + 31) / 32, (h + 31) / 32), dim3(32, 8)};
  k.reset = [&] {
    in = ramp(w * h, 1.f);
    out.assign(w * h, 0.f);
  };
  SMPART_CASE_KEPT(transpose, transpose_tiled, in.data(), out.data(), w, h);
  k.outputs = [&] { return asDoubles(out); };
  run(k);
}

TEST(TestInputs, RecordBlockIds3dHelpers) {
  const dim3 grid(3, 2, 2), block(4, 2, 2);
  const unsigned blocks = 12, threads = 16;
  std::vector<unsigned> thread_block, coords, info;
  KernelCase k{"block_helper.cu record_block_ids", grid, block};
  k.reset = [&] {
    thread_block.assign(blocks * threads, 0xffffffffu);
    coords.assign(3 * blocks, 0xffffffffu);
    info.assign(2, 0);
  };
  SMPART_CASE(block_helper, record_block_ids, thread_block.data(),
              coords.data(), info.data());
  k.outputs = [&] {
    auto v = asDoubles(thread_block);
    for (unsigned c : coords)
      v.push_back(c);
    for (unsigned c : info)
      v.push_back(c);
    return v;
  };
  run(k);
}

TEST(TestInputs, StagedByPointer) {
  const int n = 1000;
  std::vector<unsigned> in, out;
  KernelCase k{"block_helper.cu staged_by_pointer", dim3((n + 127) / 128),
               dim3(128)};
  k.reset = [&] {
    in.resize(n);
    for (int i = 0; i < n; ++i)
      in[i] = static_cast<unsigned>(i);
    out.assign(n, 0xffffffffu);
  };
  SMPART_CASE(block_helper, staged_by_pointer, in.data(), out.data(), n);
  k.outputs = [&] { return asDoubles(out); };
  run(k);
}

TEST(TestInputs, VolumeScale3d) {
  const int nx = 10, ny = 9, nz = 5;
  std::vector<float> in, out;
  KernelCase k{"block_helper.cu volume_scale3d",
               dim3((nx + 7) / 8, (ny + 7) / 8, (nz + 3) / 4), dim3(8, 8, 4)};
  k.reset = [&] {
    in = ramp(nx * ny * nz, 1.f);
    out.assign(in.size(), 0.f);
  };
  SMPART_CASE_KEPT(block_helper, volume_scale3d, in.data(), out.data(), nx, ny,
                   nz, 1.5f);
  k.outputs = [&] { return asDoubles(out); };
  run(k);
}

// --- The other kernels of test_inputs/ -----------------------------------

std::vector<double> flat(const std::vector<float4> &v) {
  std::vector<double> d;
  for (const float4 &e : v) {
    d.push_back(e.x);
    d.push_back(e.y);
    d.push_back(e.z);
    d.push_back(e.w);
  }
  return d;
}

std::vector<double> flat(const std::vector<float2> &v) {
  std::vector<double> d;
  for (const float2 &e : v) {
    d.push_back(e.x);
    d.push_back(e.y);
  }
  return d;
}

template <class T, class... More>
std::vector<double> concat(const std::vector<T> &first, const More &...more) {
  std::vector<double> d = asDoubles(first);
  (void)std::initializer_list<int>{
      (d.insert(d.end(), more.begin(), more.end()), 0)...};
  return d;
}

std::vector<float4> bodies(int n, float scale) {
  std::vector<float4> v(n);
  for (int i = 0; i < n; ++i)
    v[i] = make_float4(((i * 7) % 23) * scale, ((i * 5) % 17) * scale,
                       ((i * 3) % 11) * scale, 1.0f + (i % 4));
  return v;
}

// A CSR matrix with irregular rows, every fifth one empty.
struct Csr {
  std::vector<int> row_ptr{0}, col_idx;
  std::vector<float> vals;
  Csr(int rows, int cols) {
    for (int r = 0; r < rows; ++r) {
      const int len = r % 5 == 0 ? 0 : 1 + (r * 7) % 6;
      for (int j = 0; j < len; ++j) {
        col_idx.push_back((r * 13 + j * 29) % cols);
        vals.push_back(0.25f * ((r + j) % 9) - 1.0f);
      }
      row_ptr.push_back(static_cast<int>(col_idx.size()));
    }
  }
};

TEST(TestInputs, ScaleOffsetTwoReturns) {
  const int n = 500;
  std::vector<float> x, offset, out;
  KernelCase k{"vector_ops.cu scale_offset", dim3(4), dim3(128)};
  k.reset = [&] {
    x = ramp(n, 1.f);
    offset = ramp(7, 0.5f);
    out.assign(n, -1.f);
  };
  SMPART_CASE_KEPT(vector_ops, scale_offset, x.data(), offset.data(), 7, 3.f,
                   out.data(), n);
  k.outputs = [&] { return asDoubles(out); };
  run(k);
}

TEST(TestInputs, SgemmTiledSharedTiles2d) {
  const int M = 17, N = 20, K = 20;
  std::vector<float> A, B, C;
  KernelCase k{"sgemm_tiled.cu sgemm_tiled", dim3((N + 15) / 16, (M + 15) / 16),
               dim3(16, 16)};
  k.reset = [&] {
    A = ramp(M * K, 0.5f);
    B = ramp(K * N, 0.25f);
    C = ramp(M * N, 1.f);
  };
  SMPART_CASE_KEPT(sgemm_tiled, sgemm_tiled, M, N, K, 1.5f, A.data(), K,
                   B.data(), N, 0.5f, C.data(), N);
  k.outputs = [&] { return asDoubles(C); };
  run(k);
}

TEST(TestInputs, SgemmNaive) {
  const int M = 13, N = 17, K = 9;
  std::vector<float> A, B, C;
  KernelCase k{"sgemm_tiled.cu sgemm_naive", dim3((N + 7) / 8, (M + 3) / 4),
               dim3(8, 4)};
  k.reset = [&] {
    A = ramp(M * K, 0.5f);
    B = ramp(K * N, 0.25f);
    C = ramp(M * N, 1.f);
  };
  SMPART_CASE_KEPT(sgemm_tiled, sgemm_naive, M, N, K, 2.f, A.data(), B.data(),
                   -1.f, C.data());
  k.outputs = [&] { return asDoubles(C); };
  run(k);
}

TEST(TestInputs, Jacobi5SharedHalo) {
  const int nx = 40, ny = 12;
  std::vector<float> in, out;
  KernelCase k{"stencil2d.cu jacobi5_shared",
               dim3((nx + 31) / 32, (ny + 7) / 8), dim3(32, 8)};
  k.reset = [&] {
    in = ramp(nx * ny, 1.f);
    out.assign(nx * ny, -1.f);
  };
  SMPART_CASE_KEPT(stencil2d, jacobi5_shared, in.data(), out.data(), nx, ny,
                   0.8f);
  k.outputs = [&] { return asDoubles(out); };
  run(k);
}

TEST(TestInputs, Jacobi5Global) {
  const int nx = 20, ny = 13;
  std::vector<float> in, out;
  KernelCase k{"stencil2d.cu jacobi5_global", dim3((nx + 7) / 8, (ny + 7) / 8),
               dim3(8, 8)};
  k.reset = [&] {
    in = ramp(nx * ny, 1.f);
    out.assign(nx * ny, -1.f);
  };
  SMPART_CASE_KEPT(stencil2d, jacobi5_global, in.data(), out.data(), nx, ny,
                   0.8f);
  k.outputs = [&] { return asDoubles(out); };
  run(k);
}

TEST(TestInputs, JacobiCountChanged) {
  const int n = 500;
  std::vector<float> a, b;
  int changed = 0;
  KernelCase k{"stencil2d.cu jacobi_count_changed", dim3(4), dim3(128)};
  k.reset = [&] {
    a = ramp(n, 1.f);
    b = ramp(n, 1.1f);
    changed = 0;
  };
  SMPART_CASE_KEPT(stencil2d, jacobi_count_changed, a.data(), b.data(), n, 1.0f,
                   &changed);
  k.outputs = [&] { return std::vector<double>{double(changed)}; };
  run(k);
}

TEST(TestInputs, HistogramRangeEarlyReturns) {
  const int n = 450, nbins = 10;
  std::vector<float> values;
  std::vector<int> bins;
  int outliers = 0;
  KernelCase k{"histogram.cu histogram_range", dim3(4), dim3(128)};
  k.reset = [&] {
    values = ramp(n, 0.5f); // 0 .. 11, some outside [1, 10)
    for (int i = 0; i < n; i += 17)
      values[i] = std::nanf("");
    bins.assign(nbins, 0);
    outliers = 0;
  };
  SMPART_CASE_KEPT(histogram, histogram_range, values.data(), n, 1.f, 10.f,
                   nbins, bins.data(), &outliers);
  k.outputs = [&] {
    return concat(bins, std::vector<double>{double(outliers)});
  };
  run(k);
}

TEST(TestInputs, NbodyForcesFloat4Tile) {
  const int n = 200; // two tiles of NBODY_BLOCK = 128, the last one padded
  std::vector<float4> pos, acc;
  KernelCase k{"nbody.cu nbody_forces", dim3(2), dim3(128)};
  k.reset = [&] {
    pos = bodies(n, 0.5f);
    acc.assign(n, make_float4(-1, -1, -1, -1));
  };
  SMPART_CASE_KEPT(nbody, nbody_forces, pos.data(), acc.data(), n, 0.01f);
  k.outputs = [&] { return flat(acc); };
  run(k);
}

TEST(TestInputs, NbodyIntegrate) {
  const int n = 300;
  std::vector<float4> pos, vel, acc;
  KernelCase k{"nbody.cu nbody_integrate", dim3(3), dim3(128)};
  k.reset = [&] {
    pos = bodies(n, 0.5f);
    vel = bodies(n, 0.1f);
    acc = bodies(n, 0.01f);
  };
  SMPART_CASE_KEPT(nbody, nbody_integrate, pos.data(), vel.data(), acc.data(),
                   n, 0.01f, 0.99f);
  k.outputs = [&] {
    std::vector<double> d = flat(pos), v = flat(vel);
    d.insert(d.end(), v.begin(), v.end());
    return d;
  };
  run(k);
}

TEST(TestInputs, NbodyEnergyFloat2) {
  const int n = 300;
  std::vector<float4> pos, vel;
  std::vector<float2> out;
  KernelCase k{"nbody.cu nbody_energy", dim3(5), dim3(64)};
  k.reset = [&] {
    pos = bodies(n, 0.5f);
    vel = bodies(n, 0.1f);
    out.assign(n, make_float2(-1, -1));
  };
  SMPART_CASE_KEPT(nbody, nbody_energy, pos.data(), vel.data(), out.data(), n);
  k.outputs = [&] { return flat(out); };
  run(k);
}

struct Options {
  std::vector<float> stock, strike, years, vol, call, put;
  void reset(int n) {
    stock.resize(n);
    strike.resize(n);
    years.resize(n);
    vol.resize(n);
    for (int i = 0; i < n; ++i) {
      stock[i] = 5.f + (i * 7) % 26;
      strike[i] = 1.f + (i * 11) % 100;
      years[i] = i % 9 == 0 ? 0.f : 0.25f * (1 + i % 40); // some expired
      vol[i] = (i % 13) * 0.05f;
    }
    call.assign(n, -1.f);
    put.assign(n, -1.f);
  }
};

TEST(TestInputs, BlackScholesHelpersAndReturns) {
  const int n = 400;
  Options o;
  KernelCase k{"black_scholes.cu black_scholes", dim3(4), dim3(128)};
  k.reset = [&] { o.reset(n); };
  SMPART_CASE_KEPT(black_scholes, black_scholes, o.call.data(), o.put.data(),
                   o.stock.data(), o.strike.data(), o.years.data(), 0.02f, 0.3f,
                   n);
  k.outputs = [&] { return concat(o.call, o.put); };
  run(k);
}

TEST(TestInputs, BlackScholesStaticMemberKernel) {
  const int n = 500; // grid-stride over a grid of 192 threads
  Options o;
  KernelCase k{"black_scholes.cu OptionPricer::price_grid", dim3(3), dim3(64)};
  k.reset = [&] { o.reset(n); };
  SMPART_CASE_KEPT(black_scholes, option_pricer_price_grid, o.stock.data(),
                   o.strike.data(), o.years.data(), o.vol.data(), 0.02f,
                   o.call.data(), o.put.data(), n);
  k.outputs = [&] { return concat(o.call, o.put); };
  run(k);
}

TEST(TestInputs, SpmvCsrScalarNamespace) {
  const int rows = 300, cols = 120;
  const Csr a(rows, cols);
  std::vector<float> x, y;
  KernelCase k{"spmv_csr.cu sparse::spmv_csr_scalar", dim3(5), dim3(64)};
  k.reset = [&] {
    x = ramp(cols, 0.5f);
    y.assign(rows, -1.f);
  };
  SMPART_CASE_KEPT(spmv_csr, sparse::spmv_csr_scalar, rows, a.row_ptr.data(),
                   a.col_idx.data(), a.vals.data(), x.data(), y.data());
  k.outputs = [&] { return asDoubles(y); };
  run(k);
}

TEST(TestInputs, SpmvCsrAxpbyNamespace) {
  const int rows = 300, cols = 120;
  const Csr a(rows, cols);
  std::vector<float> x, y;
  KernelCase k{"spmv_csr.cu sparse::spmv_csr_axpby", dim3(5), dim3(64)};
  k.reset = [&] {
    x = ramp(cols, 0.5f);
    y = ramp(rows, 2.f);
  };
  SMPART_CASE_KEPT(spmv_csr, sparse::spmv_csr_axpby, rows, 1.5f,
                   a.row_ptr.data(), a.col_idx.data(), a.vals.data(), x.data(),
                   0.5f, y.data());
  k.outputs = [&] { return asDoubles(y); };
  run(k);
}

TEST(TestInputs, CsrRowLengths) {
  const int rows = 300;
  const Csr a(rows, 120);
  std::vector<int> lengths;
  int empty = 0;
  KernelCase k{"spmv_csr.cu csr_row_lengths", dim3(5), dim3(64)};
  k.reset = [&] {
    lengths.assign(rows, -1);
    empty = 0;
  };
  SMPART_CASE_KEPT(spmv_csr, csr_row_lengths, rows, a.row_ptr.data(),
                   lengths.data(), &empty);
  k.outputs = [&] {
    return concat(lengths, std::vector<double>{double(empty)});
  };
  run(k);
}

struct Points {
  static constexpr int n = 300, k = 5, dim = 4;
  std::vector<float> points = ramp(n * dim, 0.5f),
                     centroids = ramp(k * dim, 1.3f);
  std::vector<int> membership;
};

TEST(TestInputs, KmeansAssignExternShared) {
  Points p;
  int changed = 0;
  KernelCase k{"kmeans_assign.cu kmeans_assign", dim3(5), dim3(64)};
  k.dynamic_smem = Points::k * Points::dim * sizeof(float);
  k.reset = [&] {
    p.membership.assign(Points::n, 0);
    for (int i = 0; i < Points::n; i += 3)
      p.membership[i] = i % Points::k;
    changed = 0;
  };
  SMPART_CASE_KEPT(kmeans_assign, kmeans_assign, p.points.data(),
                   p.centroids.data(), Points::n, Points::k, Points::dim,
                   p.membership.data(), &changed);
  k.outputs = [&] {
    return concat(p.membership, std::vector<double>{double(changed)});
  };
  run(k);
}

TEST(TestInputs, KmeansCount) {
  Points p;
  std::vector<int> counts;
  KernelCase k{"kmeans_assign.cu kmeans_count", dim3(5), dim3(64)};
  k.reset = [&] {
    p.membership.resize(Points::n);
    for (int i = 0; i < Points::n; ++i)
      p.membership[i] = (i * 7) % (Points::k + 2) - 1; // some out of range
    counts.assign(Points::k, 0);
  };
  SMPART_CASE_KEPT(kmeans_assign, kmeans_count, p.membership.data(), Points::n,
                   Points::k, counts.data());
  k.outputs = [&] { return asDoubles(counts); };
  run(k);
}

TEST(TestInputs, KmeansUpdate2dGrid) {
  const int n = 300, kc = 7, dim = 6;
  const std::vector<float> points = ramp(n * dim, 0.5f);
  std::vector<int> membership(n);
  for (int i = 0; i < n; ++i)
    membership[i] = (i * 3) % (kc + 1); // value kc is no cluster: skipped
  std::vector<float> centroids;
  KernelCase k{"kmeans_assign.cu kmeans_update",
               dim3((dim + 3) / 4, (kc + 3) / 4), dim3(4, 4)};
  k.reset = [&] { centroids.assign(kc * dim, -1.f); };
  SMPART_CASE_KEPT(kmeans_assign, kmeans_update, points.data(),
                   membership.data(), n, kc, dim, centroids.data());
  k.outputs = [&] { return asDoubles(centroids); };
  run(k);
}

// A graph of 300 vertices in CSR, with a frontier of every seventh vertex.
struct Graph {
  static constexpr int n = 300;
  std::vector<int> offsets{0}, cols;
  std::vector<int> levels, frontier, next_frontier;
  Graph() {
    for (int v = 0; v < n; ++v) {
      for (int j = 0; j < v % 4; ++j)
        cols.push_back((v * 31 + j * 97 + 1) % n);
      offsets.push_back(static_cast<int>(cols.size()));
    }
  }
  void reset() {
    levels.assign(n, -1);
    frontier.assign(n, 0);
    next_frontier.assign(n, 0);
    for (int v = 0; v < n; ++v) {
      if (v % 7 == 0) {
        frontier[v] = 1;
        levels[v] = 1;
      } else if (v % 5 == 0)
        levels[v] = 0;
    }
  }
};

TEST(TestInputs, BfsInit) {
  Graph g;
  KernelCase k{"bfs_frontier.cu bfs_init", dim3(5), dim3(64)};
  k.reset = [&] { g.reset(); };
  SMPART_CASE_KEPT(bfs_frontier, bfs_init, Graph::n, 42, g.levels.data(),
                   g.frontier.data(), g.next_frontier.data());
  k.outputs = [&] { return concat(g.levels, g.frontier, g.next_frontier); };
  run(k);
}

TEST(TestInputs, BfsExpandAtomicCas) {
  Graph g;
  int next_count = 0;
  KernelCase k{"bfs_frontier.cu bfs_expand", dim3(5), dim3(64)};
  k.reset = [&] {
    g.reset();
    next_count = 0;
  };
  SMPART_CASE_KEPT(bfs_frontier, bfs_expand, Graph::n, g.offsets.data(),
                   g.cols.data(), g.frontier.data(), g.next_frontier.data(),
                   g.levels.data(), 1, &next_count);
  k.outputs = [&] {
    return concat(g.levels, g.next_frontier,
                  std::vector<double>{double(next_count)});
  };
  run(k);
}

TEST(TestInputs, BfsAdvanceAtomicExch) {
  Graph g;
  KernelCase k{"bfs_frontier.cu bfs_advance", dim3(5), dim3(64)};
  k.reset = [&] {
    g.reset();
    for (int v = 0; v < Graph::n; v += 3)
      g.next_frontier[v] = 1;
  };
  SMPART_CASE_KEPT(bfs_frontier, bfs_advance, Graph::n, g.frontier.data(),
                   g.next_frontier.data());
  k.outputs = [&] { return concat(g.frontier, g.next_frontier); };
  run(k);
}

TEST(TestInputs, TemplateBlockSumFloat64) {
  const int n = 300;
  std::vector<float> in, out;
  KernelCase k{"template_kernel.cu block_sum<float, 64>", dim3(5), dim3(64)};
  k.reset = [&] {
    in = ramp(n, 0.5f);
    out.assign(5, -1.f);
  };
  SMPART_CASE_KEPT(template_kernel, block_sum_float_64, in.data(), out.data(),
                   n);
  k.outputs = [&] { return asDoubles(out); };
  run(k);
}

TEST(TestInputs, TemplateBlockSumInt32) {
  const int n = 150;
  std::vector<int> in, out;
  KernelCase k{"template_kernel.cu block_sum<int, 32>", dim3(5), dim3(32)};
  k.reset = [&] {
    in.resize(n);
    for (int i = 0; i < n; ++i)
      in[i] = (i * 37) % 101 - 50;
    out.assign(5, -1);
  };
  SMPART_CASE_KEPT(template_kernel, block_sum_int_32, in.data(), out.data(), n);
  k.outputs = [&] { return asDoubles(out); };
  run(k);
}

TEST(TestInputs, TemplateAxpbyDeducedFloat) {
  const int n = 300;
  std::vector<float> x, y;
  KernelCase k{"template_kernel.cu axpby<float>", dim3(5), dim3(64)};
  k.reset = [&] {
    x = ramp(n, 0.5f);
    y = ramp(n, 2.f);
  };
  SMPART_CASE_KEPT(template_kernel, axpby_float, 1.5f, x.data(), -0.5f,
                   y.data(), n);
  k.outputs = [&] { return asDoubles(y); };
  run(k);
}

TEST(TestInputs, TemplateAxpbyExplicitInt) {
  const int n = 300;
  std::vector<int> x, y;
  KernelCase k{"template_kernel.cu axpby<int>", dim3(5), dim3(64)};
  k.reset = [&] {
    x.resize(n);
    y.resize(n);
    for (int i = 0; i < n; ++i) {
      x[i] = i % 17;
      y[i] = (i * 3) % 29;
    }
  };
  SMPART_CASE_KEPT(template_kernel, axpby_int, 3, x.data(), -2, y.data(), n);
  k.outputs = [&] { return asDoubles(y); };
  run(k);
}

TEST(TestInputs, TemplateClampCopyLaunchBounds) {
  const int n = 300;
  std::vector<float> in, out;
  KernelCase k{"template_kernel.cu clamp_copy<64, float>", dim3(5), dim3(64)};
  k.reset = [&] {
    in = ramp(n, 1.f);
    out.assign(n, -1.f);
  };
  SMPART_CASE_KEPT(template_kernel, clamp_copy_64_float, in.data(), out.data(),
                   4.f, 15.f, n);
  k.outputs = [&] { return asDoubles(out); };
  run(k);
}

TEST(TestInputs, SaxpyGridStride) {
  const int n = 1000; // 192 threads stride over 1000 elements
  std::vector<float> x, y;
  KernelCase k{"grid_stride.cu saxpy_grid_stride", dim3(3), dim3(64)};
  k.reset = [&] {
    x = ramp(n, 0.5f);
    y = ramp(n, 1.f);
  };
  SMPART_CASE_KEPT(grid_stride, saxpy_grid_stride, n, 2.f, x.data(), y.data());
  k.outputs = [&] { return asDoubles(y); };
  run(k);
}

TEST(TestInputs, ScaleClampDefaultArguments) {
  const int n = 700;
  std::vector<float> data;
  KernelCase k{"grid_stride.cu scale_clamp (defaults)", dim3(3), dim3(64)};
  k.reset = [&] { data = ramp(n, 0.01f); };
  SMPART_CASE_KEPT(grid_stride, scale_clamp, data.data(), n, 5.f);
  k.outputs = [&] { return asDoubles(data); };
  run(k);
}

TEST(TestInputs, ScaleClampExplicitArguments) {
  const int n = 700;
  std::vector<float> data;
  KernelCase k{"grid_stride.cu scale_clamp (lo, hi)", dim3(3), dim3(64)};
  k.reset = [&] { data = ramp(n, 0.01f); };
  SMPART_CASE_KEPT(grid_stride, scale_clamp, data.data(), n, 5.f, 0.2f, 0.8f);
  k.outputs = [&] { return asDoubles(data); };
  run(k);
}

TEST(TestInputs, Copy2dGridStride) {
  const int rows = 20, cols = 30, ld_in = 32, ld_out = 31;
  std::vector<float> in, out;
  KernelCase k{"grid_stride.cu copy2d_grid_stride", dim3(2, 2), dim3(8, 4)};
  k.reset = [&] {
    in = ramp(rows * ld_in, 1.f);
    out.assign(rows * ld_out, -1.f);
  };
  SMPART_CASE_KEPT(grid_stride, copy2d_grid_stride, in.data(), out.data(), rows,
                   cols, ld_in, ld_out);
  k.outputs = [&] { return asDoubles(out); };
  run(k);
}

TEST(TestInputs, CountAboveIdleBlocksReturn) {
  const int n = 300; // 8 blocks of 64: blocks 5..7 have no data
  std::vector<float> x;
  unsigned count = 0;
  KernelCase k{"grid_stride.cu count_above", dim3(8), dim3(64)};
  k.reset = [&] {
    x = ramp(n, 1.f);
    count = 0;
  };
  SMPART_CASE_KEPT(grid_stride, count_above, x.data(), n, 10.f, &count);
  k.outputs = [&] { return std::vector<double>{double(count)}; };
  run(k);
}

TEST(TestInputs, Laplacian3d) {
  const int nx = 9, ny = 7, nz = 6;
  std::vector<float> in, out;
  KernelCase k{"block_helper.cu laplacian3d",
               dim3((nx + 3) / 4, (ny + 3) / 4, (nz + 1) / 2), dim3(4, 4, 2)};
  k.reset = [&] {
    in = ramp(nx * ny * nz, 1.f);
    out.assign(in.size(), -1.f);
  };
  SMPART_CASE_KEPT(block_helper, laplacian3d, in.data(), out.data(), nx, ny,
                   nz);
  k.outputs = [&] { return asDoubles(out); };
  run(k);
}

TEST(TestInputs, TransposeNaive) {
  const int w = 20, h = 13;
  std::vector<float> in, out;
  KernelCase k{"transpose.cu transpose_naive", dim3((w + 7) / 8, (h + 7) / 8),
               dim3(8, 8)};
  k.reset = [&] {
    in = ramp(w * h, 1.f);
    out.assign(w * h, -1.f);
  };
  SMPART_CASE_KEPT(transpose, transpose_naive, in.data(), out.data(), w, h);
  k.outputs = [&] { return asDoubles(out); };
  run(k);
}

TEST(TestInputs, ScanBlockExclusiveBlelloch) {
  const int n = 300, block = 32, grid = (n + 2 * block - 1) / (2 * block);
  std::vector<int> in, out, sums;
  KernelCase k{"prefix_scan.cu scan_block_exclusive", dim3(grid), dim3(block)};
  k.dynamic_smem = 2 * block * sizeof(int);
  k.reset = [&] {
    in.resize(n);
    for (int i = 0; i < n; ++i)
      in[i] = (i * 7) % 13 - 3;
    out.assign(n, -1);
    sums.assign(grid, -1);
  };
  SMPART_CASE_KEPT(prefix_scan, scan_block_exclusive, in.data(), out.data(),
                   sums.data(), n);
  k.outputs = [&] { return concat(out, asDoubles(sums)); };
  run(k);
}

TEST(TestInputs, ScanAddOffsets) {
  const int n = 300, block = 32, grid = (n + 2 * block - 1) / (2 * block);
  std::vector<int> out, sums;
  KernelCase k{"prefix_scan.cu scan_add_offsets", dim3(grid), dim3(block)};
  k.reset = [&] {
    out.resize(n);
    for (int i = 0; i < n; ++i)
      out[i] = i % 11;
    sums.resize(grid);
    for (int b = 0; b < grid; ++b)
      sums[b] = 100 * b;
  };
  SMPART_CASE_KEPT(prefix_scan, scan_add_offsets, out.data(), sums.data(), n);
  k.outputs = [&] { return asDoubles(out); };
  run(k);
}

} // namespace
