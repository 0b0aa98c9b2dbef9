// Breadth-first search by level expansion over a CSR graph (Rodinia bfs /
// Harish-Narayanan style). Vertices are claimed with atomicCAS on their level,
// so every reached vertex is claimed exactly once and the frontier counter
// (atomicAdd) is independent of scheduling.
#include <cuda_runtime.h>

// levels[v] = -1 except the source; frontier = {source}.
__global__ void bfs_init(int num_vertices, int source, int *levels,
                         int *frontier, int *next_frontier) {
  const int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= num_vertices)
    return;
  levels[v] = v == source ? 0 : -1;
  frontier[v] = v == source ? 1 : 0;
  next_frontier[v] = 0;
}

// Expands every frontier vertex: unvisited neighbours get level cur_level + 1,
// join the next frontier and bump *next_count. Irregular: the work per thread
// is the vertex degree.
__global__ void bfs_expand(int num_vertices, const int *row_offsets,
                           const int *col_indices, const int *frontier,
                           int *next_frontier, int *levels, int cur_level,
                           int *next_count) {
  const int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= num_vertices)
    return;
  if (!frontier[v])
    return;
  const int begin = row_offsets[v];
  const int end = row_offsets[v + 1];
  for (int e = begin; e < end; ++e) {
    const int u = col_indices[e];
    if (atomicCAS(&levels[u], -1, cur_level + 1) == -1) {
      next_frontier[u] = 1;
      atomicAdd(next_count, 1);
    }
  }
}

// frontier = next_frontier; next_frontier = 0.
__global__ void bfs_advance(int num_vertices, int *frontier,
                            int *next_frontier) {
  const int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= num_vertices)
    return;
  frontier[v] = atomicExch(&next_frontier[v], 0);
}

#if !defined(SMPART_EMULATION)
// Host launchers; not compiled by the CPU emulation.
static inline int bfs_blocks(int n, int block) {
  return (n + block - 1) / block;
}

void launch_bfs_init(int num_vertices, int source, int *levels, int *frontier,
                     int *next_frontier) {
  bfs_init<<<bfs_blocks(num_vertices, 256), 256>>>(num_vertices, source, levels,
                                                   frontier, next_frontier);
}

void launch_bfs_expand(int num_vertices, const int *row_offsets,
                       const int *col_indices, const int *frontier,
                       int *next_frontier, int *levels, int cur_level,
                       int *next_count, cudaStream_t stream) {
  bfs_expand<<<bfs_blocks(num_vertices, 128), 128, 0, stream>>>(
      num_vertices, row_offsets, col_indices, frontier, next_frontier, levels,
      cur_level, next_count);
}

void launch_bfs_advance(int num_vertices, int *frontier, int *next_frontier,
                        cudaStream_t stream) {
  bfs_advance<<<bfs_blocks(num_vertices, 256), 256, 0, stream>>>(
      num_vertices, frontier, next_frontier);
}

// Full BFS from source; d_count is one device int. Returns the depth reached,
// or -1 on a CUDA error.
int bfs_run(int num_vertices, const int *row_offsets, const int *col_indices,
            int source, int *levels, int *frontier, int *next_frontier,
            int *d_count, cudaStream_t stream) {
  launch_bfs_init(num_vertices, source, levels, frontier, next_frontier);
  if (cudaDeviceSynchronize() != cudaSuccess)
    return -1;
  int level = 0;
  for (;;) {
    int count = 0;
    cudaMemsetAsync(d_count, 0, sizeof(int), stream);
    launch_bfs_expand(num_vertices, row_offsets, col_indices, frontier,
                      next_frontier, levels, level, d_count, stream);
    cudaMemcpyAsync(&count, d_count, sizeof(int), cudaMemcpyDeviceToHost,
                    stream);
    if (cudaStreamSynchronize(stream) != cudaSuccess)
      return -1;
    if (count == 0)
      break;
    launch_bfs_advance(num_vertices, frontier, next_frontier, stream);
    ++level;
  }
  return level;
}
#endif
