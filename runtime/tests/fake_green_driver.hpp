// A fake green-context driver for smpart::Partition's tests without a GPU,
// behind the resolver green::Pool::resetForTesting() injects: a device of
// driver().sms SMs whose real ids are the even numbers 0..2*sms-2, split
// as the driver splits (a count below the minimum partition size or off
// the alignment is refused). Streams are fake_cuda/'s. One driver per test
// binary: the resolver hands out plain function pointers.
#pragma once

#include "fake_cuda/fake_cuda.hpp"
#include "green_contexts.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace smpart_test::fake_green {

/// The device the driver describes, and what a test reads back.
struct Driver {
  unsigned sms = 20;
  unsigned min_partition = 4;    ///< minSmPartitionSize
  unsigned alignment = 4;        ///< smCoscheduledAlignment
  unsigned contexts = 0;         ///< cuGreenCtxCreate calls
  std::set<std::string> missing; ///< symbols the resolver does not find
};

inline Driver &driver() {
  static Driver d;
  return d;
}

/// A green context: the groups of its resources, one bit per group.
struct Context {
  std::uint64_t groups;
};

inline CUresult CUDAAPI deviceGet(CUdevice *d, int ordinal) {
  *d = ordinal;
  return CUDA_SUCCESS;
}
inline CUresult CUDAAPI getDevResource(CUdevice, CUdevResource *r,
                                       CUdevResourceType type) {
  std::memset(r, 0, sizeof *r);
  r->type = type;
  r->sm.smCount = driver().sms;
  r->sm.minSmPartitionSize = driver().min_partition;
  r->sm.smCoscheduledAlignment = driver().alignment;
  return CUDA_SUCCESS;
}
inline CUresult CUDAAPI split(CUdevResource *result, unsigned *groups,
                              const CUdevResource *input, CUdevResource *,
                              unsigned, unsigned min_count) {
  // Like the driver: a count below the device's minimum is refused.
  if (min_count < driver().min_partition || min_count % driver().alignment)
    return CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION;
  const unsigned n = std::min(*groups, input->sm.smCount / min_count);
  for (unsigned i = 0; i < n; ++i) {
    std::memset(&result[i], 0, sizeof result[i]);
    result[i].type = CU_DEV_RESOURCE_TYPE_SM;
    result[i].sm.smCount = min_count;
    result[i]._internal_padding[0] = static_cast<unsigned char>(i);
  }
  *groups = n;
  return CUDA_SUCCESS;
}
inline CUresult CUDAAPI generateDesc(CUdevResourceDesc *desc,
                                     CUdevResource *res, unsigned n) {
  auto *g = new Context{0};
  for (unsigned i = 0; i < n; ++i)
    g->groups |= 1ull << res[i]._internal_padding[0];
  *desc = reinterpret_cast<CUdevResourceDesc>(g);
  return CUDA_SUCCESS;
}
inline CUresult CUDAAPI create(CUgreenCtx *ctx, CUdevResourceDesc desc,
                               CUdevice, unsigned) {
  ++driver().contexts;
  *ctx = reinterpret_cast<CUgreenCtx>(desc);
  return CUDA_SUCCESS;
}
inline CUresult CUDAAPI destroy(CUgreenCtx) { return CUDA_SUCCESS; }
inline CUresult CUDAAPI streamCreate(CUstream *s, CUgreenCtx, unsigned flags,
                                     int) {
  cudaStream_t st = nullptr;
  cudaStreamCreateWithFlags(&st, flags);
  *s = st;
  return CUDA_SUCCESS;
}

/// The resolver to inject: the fake's entry points but driver().missing.
inline void *resolve(const char *symbol, unsigned) {
  if (driver().missing.count(symbol))
    return nullptr;
  static const std::map<std::string, void *> table = {
      {"cuDeviceGet", reinterpret_cast<void *>(&deviceGet)},
      {"cuDeviceGetDevResource", reinterpret_cast<void *>(&getDevResource)},
      {"cuDevSmResourceSplitByCount", reinterpret_cast<void *>(&split)},
      {"cuDevResourceGenerateDesc", reinterpret_cast<void *>(&generateDesc)},
      {"cuGreenCtxCreate", reinterpret_cast<void *>(&create)},
      {"cuGreenCtxDestroy", reinterpret_cast<void *>(&destroy)},
      {"cuGreenCtxStreamCreate", reinterpret_cast<void *>(&streamCreate)},
  };
  auto it = table.find(symbol);
  return it == table.end() ? nullptr : it->second;
}

/// Real ids of group g of \p group SMs: even numbers.
inline std::vector<unsigned> groupIds(unsigned g, unsigned group) {
  std::vector<unsigned> ids;
  for (unsigned k = 0; k < group; ++k)
    ids.push_back(2 * (g * group + k));
  return ids;
}

/// Real ids of the first \p groups groups of \p group SMs, in order.
inline std::vector<unsigned> groupsIds(unsigned groups, unsigned group) {
  std::vector<unsigned> ids;
  for (unsigned g = 0; g < groups; ++g)
    for (unsigned id : groupIds(g, group))
      ids.push_back(id);
  return ids;
}

} // namespace smpart_test::fake_green
