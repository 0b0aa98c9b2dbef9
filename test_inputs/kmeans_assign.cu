// k-means clustering, assignment step (Rodinia kmeans style): each point is
// assigned to its nearest centroid; centroids are cached in dynamic shared
// memory; membership changes and cluster sizes are counted with int atomics.
#include <cfloat>
#include <cuda_runtime.h>

// Squared Euclidean distance between a point (row-major, stride dim) and a
// centroid in shared memory.
__device__ inline float squared_distance(const float *point,
                                         const float *centroid, int dim) {
  float d = 0.0f;
  for (int f = 0; f < dim; ++f) {
    const float diff = point[f] - centroid[f];
    d += diff * diff;
  }
  return d;
}

// points: n x dim, centroids: k x dim (row-major). Shared memory:
// k * dim floats. Ties go to the lowest centroid index.
__global__ void kmeans_assign(const float *points, const float *centroids,
                              int n, int k, int dim, int *membership,
                              int *changed) {
  extern __shared__ float shared_centroids[];
  for (int t = threadIdx.x; t < k * dim; t += blockDim.x)
    shared_centroids[t] = centroids[t];
  __syncthreads();

  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float best = FLT_MAX;
    int best_c = 0;
    for (int c = 0; c < k; ++c) {
      const float d =
          squared_distance(points + i * dim, shared_centroids + c * dim, dim);
      if (d < best) {
        best = d;
        best_c = c;
      }
    }
    if (membership[i] != best_c) {
      membership[i] = best_c;
      atomicAdd(changed, 1);
    }
  }
}

// Cluster sizes from the membership array.
__global__ void kmeans_count(const int *membership, int n, int k, int *counts) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  const int c = membership[i];
  if (c < 0 || c >= k)
    return;
  atomicAdd(&counts[c], 1);
}

// New centroid coordinates by a per-(cluster, feature) scan over all points,
// a deterministic alternative to float atomics. 2-D grid: x over features,
// y over clusters.
__global__ void kmeans_update(const float *points, const int *membership, int n,
                              int k, int dim, float *centroids) {
  const int f = blockIdx.x * blockDim.x + threadIdx.x;
  const int c = blockIdx.y * blockDim.y + threadIdx.y;
  if (f >= dim || c >= k)
    return;
  float sum = 0.0f;
  int count = 0;
  for (int i = 0; i < n; ++i) {
    if (membership[i] == c) {
      sum += points[i * dim + f];
      ++count;
    }
  }
  if (count > 0)
    centroids[c * dim + f] = sum / count;
}

#if !defined(SMPART_EMULATION)
// Host launchers; not compiled by the CPU emulation.
void launch_kmeans_assign(const float *points, const float *centroids, int n,
                          int k, int dim, int *membership, int *changed,
                          cudaStream_t stream) {
  const int block = 256;
  const size_t smem = static_cast<size_t>(k) * dim * sizeof(float);
  kmeans_assign<<<(n + block - 1) / block, block, smem, stream>>>(
      points, centroids, n, k, dim, membership, changed);
}

void launch_kmeans_count(const int *membership, int n, int k, int *counts) {
  kmeans_count<<<(n + 255) / 256, 256>>>(membership, n, k, counts);
}

void launch_kmeans_update(const float *points, const int *membership, int n,
                          int k, int dim, float *centroids) {
  dim3 block(8, 8);
  dim3 grid((dim + 7) / 8, (k + 7) / 8);
  kmeans_update<<<grid, block>>>(points, membership, n, k, dim, centroids);
}
#endif
