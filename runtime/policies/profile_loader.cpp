// smpart.profiles/1 loader. Validation lives here, once, so policies can
// trust the model: counts are positive and bounded, curves are sorted and
// strictly increasing in their x, rates are fractions, names are unique.
#include "smpart/policy/profile_loader.hpp"

#include "json_reader.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <set>

namespace smpart::policy {

using detail::JsonNode;

namespace {
// Generous bounds that keep every product below int64/double trouble.
constexpr long long MaxSms = 1 << 16;
constexpr long long MaxCount = 1LL << 40;
constexpr long long MaxPerSm = 1LL << 30;
constexpr long long MaxCtas = 1 << 16;
constexpr long long MaxThreadsPerBlock = 1024;
// Times in ms from 1 ns to about 11.6 days: ratios of two times and their
// products with the other bounded inputs stay finite, so predictions do.
constexpr double MinTimeMs = 1e-6;
constexpr double MaxTimeMs = 1e9;

double readTime(const JsonNode &T) {
  return T.asNumber(MinTimeMs, MaxTimeMs, "a time in ms");
}

std::optional<double> optNumber(const JsonNode &Obj, const char *Key,
                                double Min, double Max,
                                const char *What = "a number") {
  if (auto M = Obj.optionalMember(Key))
    return M->asNumber(Min, Max, What);
  return std::nullopt;
}

std::optional<double> optPositive(const JsonNode &Obj, const char *Key,
                                  double Max,
                                  const char *What = "a positive number") {
  if (auto M = Obj.optionalMember(Key))
    return M->asPositive(Max, What);
  return std::nullopt;
}

std::optional<long long> optInteger(const JsonNode &Obj, const char *Key,
                                    long long Min, long long Max,
                                    const char *What) {
  if (auto M = Obj.optionalMember(Key))
    return M->asInteger(Min, Max, What);
  return std::nullopt;
}

GpuSpec readGpu(const JsonNode &G, std::vector<std::string> &Warnings) {
  G.checkMembers({"name", "num_sms", "max_threads_per_sm", "max_blocks_per_sm",
                  "regs_per_sm", "smem_per_sm", "clock_ghz", "ipc_max_per_sm",
                  "cache_line_bytes", "noc_bw_gbs", "llc_bw_gbs", "mem_bw_gbs",
                  "mem_bw_util", "hsm"},
                 Warnings);
  GpuSpec Gpu;
  if (auto N = G.optionalMember("name"))
    Gpu.name = N->asString();
  Gpu.num_sms = static_cast<int>(
      G.member("num_sms").asInteger(1, MaxSms, "a positive integer"));
  Gpu.max_threads_per_sm =
      optInteger(G, "max_threads_per_sm", 1, MaxPerSm, "a positive integer");
  Gpu.max_blocks_per_sm =
      optInteger(G, "max_blocks_per_sm", 1, MaxPerSm, "a positive integer");
  Gpu.regs_per_sm =
      optInteger(G, "regs_per_sm", 1, MaxPerSm, "a positive integer");
  Gpu.smem_per_sm =
      optInteger(G, "smem_per_sm", 0, MaxPerSm, "a non-negative integer");
  Gpu.clock_ghz = optPositive(G, "clock_ghz", 1e3);
  Gpu.ipc_max_per_sm = optPositive(G, "ipc_max_per_sm", 1e6);
  Gpu.cache_line_bytes = optPositive(G, "cache_line_bytes", 1e9);
  Gpu.noc_bw_gbs = optPositive(G, "noc_bw_gbs", 1e12);
  Gpu.llc_bw_gbs = optNumber(G, "llc_bw_gbs", 0, 1e12, "a non-negative number");
  Gpu.mem_bw_gbs = optPositive(G, "mem_bw_gbs", 1e12);
  Gpu.mem_bw_util = optNumber(G, "mem_bw_util", 0, 1, "a fraction");
  if (auto H = G.optionalMember("hsm")) {
    H->requireObject();
    Gpu.hsm.c1 = optNumber(*H, "c1", -1e6, 1e6);
    Gpu.hsm.c2 = optNumber(*H, "c2", -1e6, 1e6);
    Gpu.hsm.epoch_cycles = optPositive(*H, "epoch_cycles", 1e15);
    H->checkMembers({"c1", "c2", "epoch_cycles"}, Warnings);
  }
  return Gpu;
}

/// A block must fit on one SM of \p Gpu, or no policy can place it.
BlockShape readBlock(const JsonNode &B, const GpuSpec &Gpu,
                     std::vector<std::string> &Warnings) {
  B.checkMembers({"threads", "regs_per_thread", "smem_bytes"}, Warnings);
  BlockShape Shape;
  // CUDA allows at most 1024 threads per block on every architecture.
  long long MaxThreads = std::min<long long>(
      MaxThreadsPerBlock, Gpu.max_threads_per_sm.value_or(MaxThreadsPerBlock));
  Shape.threads = B.member("threads").asInteger(
      1, MaxThreads,
      MaxThreads < MaxThreadsPerBlock
          ? "a thread count per block (at most gpu.max_threads_per_sm)"
          : "a thread count per block (CUDA allows at most 1024)");
  if (auto R = B.optionalMember("regs_per_thread")) {
    Shape.regs_per_thread = R->asInteger(0, 255, "a register count per thread");
    if (Gpu.regs_per_sm &&
        Shape.regs_per_thread * Shape.threads > *Gpu.regs_per_sm)
      R->fail("expected a block that fits gpu.regs_per_sm (" +
              std::to_string(*Gpu.regs_per_sm) + "), got " +
              std::to_string(Shape.threads) + " threads x " +
              std::to_string(Shape.regs_per_thread) + " registers");
  }
  if (auto S = B.optionalMember("smem_bytes"))
    Shape.smem_bytes =
        S->asInteger(0, Gpu.smem_per_sm.value_or(MaxPerSm),
                     Gpu.smem_per_sm ? "a byte count (at most gpu.smem_per_sm)"
                                     : "a non-negative integer");
  return Shape;
}

void readIsolated(const JsonNode &I, KernelProfile &K, int NumSms,
                  std::vector<std::string> &Warnings) {
  I.checkMembers({"by_sms", "by_ctas_per_sm"}, Warnings);
  if (auto S = I.optionalMember("by_sms")) {
    std::size_t N = S->arraySize();
    for (std::size_t Idx = 0; Idx < N; ++Idx) {
      JsonNode P = S->element(Idx);
      P.checkMembers({"sms", "time_ms", "ipc", "power_w"}, Warnings);
      SmPoint Point;
      JsonNode SmsNode = P.member("sms");
      Point.sms = static_cast<int>(
          SmsNode.asInteger(1, NumSms, "a positive integer (an SM count)"));
      if (!K.by_sms.empty() && Point.sms <= K.by_sms.back().sms)
        SmsNode.fail("expected SM counts in strictly increasing order (" +
                     std::to_string(Point.sms) + " after " +
                     std::to_string(K.by_sms.back().sms) + ")");
      Point.time_ms = readTime(P.member("time_ms"));
      Point.ipc = optNumber(P, "ipc", 0, 1e12, "a non-negative number");
      Point.power_w = optPositive(P, "power_w", 1e9);
      K.by_sms.push_back(Point);
    }
  }
  if (auto C = I.optionalMember("by_ctas_per_sm")) {
    std::size_t N = C->arraySize();
    for (std::size_t Idx = 0; Idx < N; ++Idx) {
      JsonNode P = C->element(Idx);
      P.checkMembers({"ctas", "time_ms"}, Warnings);
      CtaPoint Point;
      JsonNode CtasNode = P.member("ctas");
      Point.ctas = static_cast<int>(
          CtasNode.asInteger(1, MaxCtas, "a positive integer"));
      if (!K.by_ctas.empty() && Point.ctas <= K.by_ctas.back().ctas)
        CtasNode.fail("expected CTA counts in strictly increasing order (" +
                      std::to_string(Point.ctas) + " after " +
                      std::to_string(K.by_ctas.back().ctas) + ")");
      Point.time_ms = readTime(P.member("time_ms"));
      K.by_ctas.push_back(Point);
    }
  }
}

KernelMetrics readMetrics(const JsonNode &M,
                          std::vector<std::string> &Warnings) {
  M.checkMembers(
      {"llc_apki", "llc_hit_rate", "bw_util", "rbh", "type", "opt_ctas_per_sm"},
      Warnings);
  KernelMetrics Out;
  Out.llc_apki = optNumber(M, "llc_apki", 0, 1e9, "a non-negative number");
  Out.llc_hit_rate = optNumber(M, "llc_hit_rate", 0, 1, "a fraction");
  Out.bw_util = optNumber(M, "bw_util", 0, 1, "a fraction");
  Out.rbh = optNumber(M, "rbh", 0, 1, "a fraction");
  if (auto T = M.optionalMember("type")) {
    std::string S = T->asString();
    if (S == "Up")
      Out.type = TlpType::Up;
    else if (S == "Optimal")
      Out.type = TlpType::Optimal;
    else if (S == "Down")
      Out.type = TlpType::Down;
    else
      T->fail("expected \"Up\", \"Optimal\" or \"Down\"");
  }
  if (auto O =
          optInteger(M, "opt_ctas_per_sm", 1, MaxCtas, "a positive integer"))
    Out.opt_ctas_per_sm = static_cast<int>(*O);
  return Out;
}

SharedSample readShared(const JsonNode &S, int NumSms,
                        std::vector<std::string> &Warnings) {
  S.checkMembers(
      {"sms", "instructions", "cycles", "mem_accesses", "bw_util", "rbh"},
      Warnings);
  SharedSample Out;
  if (auto N =
          optInteger(S, "sms", 1, NumSms, "a positive integer (an SM count)"))
    Out.sms = static_cast<int>(*N);
  Out.instructions = optPositive(S, "instructions", 1e30);
  Out.cycles = optPositive(S, "cycles", 1e30);
  Out.mem_accesses =
      optNumber(S, "mem_accesses", 0, 1e30, "a non-negative number");
  Out.bw_util = optNumber(S, "bw_util", 0, 1, "a fraction");
  Out.rbh = optNumber(S, "rbh", 0, 1, "a fraction");
  return Out;
}

KernelProfile readKernel(const JsonNode &KN, const GpuSpec &Gpu,
                         std::vector<std::string> &Warnings) {
  KN.checkMembers({"name", "block", "total_blocks", "executed_blocks",
                   "isolated", "metrics", "shared", "priority", "np_target"},
                  Warnings);
  const int NumSms = Gpu.num_sms;
  KernelProfile K;
  JsonNode NameNode = KN.member("name");
  K.name = NameNode.asString();
  if (K.name.empty())
    NameNode.fail("expected a non-empty string");
  if (auto B = KN.optionalMember("block"))
    K.block = readBlock(*B, Gpu, Warnings);
  K.total_blocks =
      optInteger(KN, "total_blocks", 1, MaxCount, "a positive integer");
  if (auto E = KN.optionalMember("executed_blocks")) {
    long long Max = K.total_blocks ? *K.total_blocks : MaxCount;
    K.executed_blocks =
        E->asInteger(0, Max, "a non-negative integer <= total_blocks");
  }
  if (auto I = KN.optionalMember("isolated"))
    readIsolated(*I, K, NumSms, Warnings);
  if (auto M = KN.optionalMember("metrics"))
    K.metrics = readMetrics(*M, Warnings);
  if (auto S = KN.optionalMember("shared"))
    K.shared = readShared(*S, NumSms, Warnings);
  if (auto P = KN.optionalMember("priority")) {
    std::string S = P->asString();
    if (S == "high")
      K.priority = Priority::High;
    else if (S == "normal")
      K.priority = Priority::Normal;
    else if (S == "low")
      K.priority = Priority::Low;
    else
      P->fail("expected \"high\", \"normal\" or \"low\"");
  }
  K.np_target = optPositive(KN, "np_target", 1, "a fraction");
  return K;
}

/// "256 MiB", or "100 bytes" for a limit that is not whole mebibytes.
std::string sizeText(std::size_t Bytes) {
  constexpr std::size_t MiB = std::size_t{1} << 20;
  return Bytes % MiB == 0 && Bytes > 0 ? std::to_string(Bytes / MiB) + " MiB"
                                       : std::to_string(Bytes) + " bytes";
}

} // namespace

std::string kernelPath(std::size_t Index) {
  return "kernels[" + std::to_string(Index) + "]";
}

const char *tlpTypeName(TlpType Type) {
  switch (Type) {
  case TlpType::Up:
    return "Up";
  case TlpType::Optimal:
    return "Optimal";
  case TlpType::Down:
    return "Down";
  }
  return "?";
}

ProfileSet parseProfiles(const std::string &Text, const std::string &Source) {
  nlohmann::json Doc = detail::parseJsonDocument(Text, Source);
  JsonNode Root(Doc, Source, "");
  ProfileSet Set;
  Root.checkMembers({"schema", "gpu", "kernels"}, Set.warnings);
  JsonNode Schema = Root.member("schema");
  if (Schema.asString() != ProfilesSchema)
    Schema.fail(std::string("expected \"") + ProfilesSchema + "\", got \"" +
                Schema.asString() + "\"");

  Set.source = Source;
  Set.gpu = readGpu(Root.member("gpu"), Set.warnings);

  JsonNode Kernels = Root.member("kernels");
  std::size_t N = Kernels.arraySize();
  if (N == 0)
    Kernels.fail("expected at least one kernel");
  if (N > static_cast<std::size_t>(Set.gpu.num_sms))
    Kernels.fail("expected at most " + std::to_string(Set.gpu.num_sms) +
                 " kernels (gpu.num_sms; each needs an SM), got " +
                 std::to_string(N));
  std::set<std::string> Names;
  for (std::size_t I = 0; I < N; ++I) {
    JsonNode KN = Kernels.element(I);
    Set.kernels.push_back(readKernel(KN, Set.gpu, Set.warnings));
    if (!Names.insert(Set.kernels.back().name).second)
      KN.member("name").fail("expected a unique kernel name, \"" +
                             Set.kernels.back().name + "\" repeats");
  }
  return Set;
}

std::string readTextFile(const std::string &Path, std::size_t MaxBytes) {
  // The path and the reason, as cat(1) says them; there is no JSON path yet.
  std::error_code Ec;
  if (std::filesystem::is_directory(Path, Ec))
    throw InputError(Path, "", "expected a file, got a folder");
  std::unique_ptr<std::FILE, int (*)(std::FILE *)> F(
      std::fopen(Path.c_str(), "rb"), &std::fclose);
  if (!F)
    throw InputError(Path, "", std::strerror(errno));
  std::string Text;
  char Buf[65536];
  std::size_t N;
  while ((N = std::fread(Buf, 1, sizeof Buf, F.get())) > 0) {
    if (N > MaxBytes - Text.size())
      throw InputError(Path, "",
                       "larger than " + sizeText(MaxBytes) +
                           ": not a document smpart reads");
    Text.append(Buf, N);
  }
  if (std::ferror(F.get()))
    throw InputError(Path, "",
                     std::string("read error: ") + std::strerror(errno));
  return Text;
}

ProfileSet loadProfiles(const std::string &Path) {
  return parseProfiles(readTextFile(Path), Path);
}

} // namespace smpart::policy
