// Nsight Compute CSV import. See profiler.hpp for the metric mapping.
#include "smpart/profiler.hpp"

#include "smpart/policy/input_error.hpp"

#include <cmath>
#include <cstdlib>
#include <map>

namespace smpart::profiler {

using policy::InputError;

namespace {
constexpr const char *MRequests = "lts__t_requests_srcunit_tex.sum";
constexpr const char *MInst = "smsp__inst_executed.sum";
constexpr const char *MHit = "lts__t_sector_hit_rate.pct";
constexpr const char *MDram =
    "dram__throughput.avg.pct_of_peak_sustained_elapsed";

std::string where(const std::string &Source, std::size_t Line) {
  return Source + ":" + std::to_string(Line);
}

// One CSV record (RFC 4180: quoted fields, "" inside quotes, commas and
// newlines inside quotes). Returns false at end of input.
bool readRecord(const std::string &T, std::size_t &Pos, std::size_t &Line,
                std::vector<std::string> &Out, const std::string &Source) {
  Out.clear();
  if (Pos >= T.size())
    return false;
  std::string Field;
  bool Quoted = false, WasQuoted = false;
  const std::size_t StartLine = Line;
  while (Pos < T.size()) {
    char C = T[Pos++];
    if (Quoted) {
      if (C == '"') {
        if (Pos < T.size() && T[Pos] == '"') {
          Field += '"';
          ++Pos;
        } else {
          Quoted = false;
        }
      } else {
        if (C == '\n')
          ++Line;
        Field += C;
      }
      continue;
    }
    if (C == '"' && Field.empty() && !WasQuoted) {
      Quoted = WasQuoted = true;
    } else if (C == ',') {
      Out.push_back(std::move(Field));
      Field.clear();
      WasQuoted = false;
    } else if (C == '\n' || C == '\r') {
      if (C == '\r' && Pos < T.size() && T[Pos] == '\n')
        ++Pos;
      ++Line;
      Out.push_back(std::move(Field));
      return true;
    } else {
      Field += C;
    }
  }
  if (Quoted)
    throw InputError(where(Source, StartLine), "(csv)",
                     "unterminated quoted field");
  Out.push_back(std::move(Field));
  ++Line;
  return true;
}

// Scale of an SI-prefixed unit relative to its base ("Kinst" -> 1e3).
double unitScale(const std::string &U) {
  static const char *Bases[] = {"byte",   "inst", "request", "sector", "cycle",
                                "second", "warp", "thread",  "hz",     "Hz"};
  if (U.size() < 2)
    return 1;
  double S = 1;
  switch (U[0]) {
  case 'K':
    S = 1e3;
    break;
  case 'M':
    S = 1e6;
    break;
  case 'G':
    S = 1e9;
    break;
  case 'T':
    S = 1e12;
    break;
  case 'm':
    S = 1e-3;
    break;
  case 'u':
    S = 1e-6;
    break;
  case 'n':
    S = 1e-9;
    break;
  default:
    return 1;
  }
  std::string Rest = U.substr(1);
  for (const char *B : Bases)
    if (Rest.rfind(B, 0) == 0)
      return S;
  return 1;
}

// "1,234,567.5" -> 1234567.5; nullopt for "n/a", "", "-".
std::optional<double> parseValue(std::string V, const std::string &Where,
                                 const std::string &Column) {
  std::string S;
  for (char C : V)
    if (C != ',' && C != ' ')
      S += C;
  if (S.empty() || S == "n/a" || S == "N/A" || S == "-")
    return std::nullopt;
  char *End = nullptr;
  double D = std::strtod(S.c_str(), &End);
  if (End != S.c_str() + S.size() || !std::isfinite(D))
    throw InputError(Where, Column, "expected a number, got \"" + V + "\"");
  return D;
}

/// \p V, metric \p M's value at \p Where (column \p Column), if it can be
/// one: counts are not negative, percentages lie in 0..100 (up to 101 is
/// taken as rounding and clamped, as Nsight Compute may print 100.3).
double checkedMetric(const std::string &M, double V, const std::string &Where,
                     const std::string &Column) {
  const bool Percent = M == MHit || M == MDram;
  if (V < 0 || !std::isfinite(V) || (Percent && V > 101))
    throw InputError(
        Where, Column,
        std::string("expected ") +
            (Percent ? "a percentage (0 to 100)" : "a non-negative count") +
            " for " + M + ", got " + std::to_string(V));
  return Percent ? std::min(V, 100.0) : V;
}

struct Launch {
  std::string kernel;
  std::map<std::string, double> metrics;
};

int column(const std::vector<std::string> &Header, const char *Name) {
  for (std::size_t I = 0; I < Header.size(); ++I)
    if (Header[I] == Name)
      return static_cast<int>(I);
  return -1;
}
} // namespace

const char *ncuMetricList() {
  return "lts__t_requests_srcunit_tex.sum,smsp__inst_executed.sum,"
         "lts__t_sector_hit_rate.pct,"
         "dram__throughput.avg.pct_of_peak_sustained_elapsed";
}

std::string baseKernelName(const std::string &N) {
  std::string S = N;
  if (S.rfind("void ", 0) == 0)
    S = S.substr(5);
  // Cut at the '(' of the argument list (outside template brackets).
  int Depth = 0;
  for (std::size_t I = 0; I < S.size(); ++I) {
    if (S[I] == '<')
      ++Depth;
    else if (S[I] == '>')
      --Depth;
    else if (S[I] == '(' && Depth == 0)
      return S.substr(0, I);
  }
  return S;
}

std::vector<NcuMetrics> importNcuCsv(const std::string &Text,
                                     const std::string &Source) {
  std::size_t Pos = 0, Line = 1;
  std::vector<std::string> Rec, Header;
  std::size_t HeaderLine = 0;
  // Skip ==PROF== and other tool chatter up to the header.
  while (readRecord(Text, Pos, Line, Rec, Source)) {
    if (!Rec.empty() && Rec[0] == "ID") {
      Header = Rec;
      HeaderLine = Line - 1;
      break;
    }
  }
  if (Header.empty())
    throw InputError(Source + ":1", "(csv)",
                     "expected an Nsight Compute CSV header starting with "
                     "\"ID\" (ncu --csv --metrics ...)");
  const int CId = column(Header, "ID");
  const int CKernel = column(Header, "Kernel Name");
  if (CKernel < 0)
    throw InputError(where(Source, HeaderLine), "(header)",
                     "expected a \"Kernel Name\" column");
  const int CMetric = column(Header, "Metric Name");
  const int CUnit = column(Header, "Metric Unit");
  const int CValue = column(Header, "Metric Value");
  const bool Long = CMetric >= 0;
  if (Long && CValue < 0)
    throw InputError(
        where(Source, HeaderLine), "(header)",
        "expected a \"Metric Value\" column next to \"Metric Name\"");

  std::map<std::string, Launch> Launches; // by ID
  std::vector<std::string> LaunchOrder;
  std::vector<std::string> Units; // raw page
  while (true) {
    const std::size_t RecLine = Line;
    if (!readRecord(Text, Pos, Line, Rec, Source))
      break;
    if (Rec.size() == 1 && Rec[0].empty())
      continue; // blank line
    if (Rec.size() != Header.size())
      throw InputError(where(Source, RecLine), "(csv)",
                       "expected " + std::to_string(Header.size()) +
                           " fields like the header, got " +
                           std::to_string(Rec.size()));
    if (!Long && Rec[CId].empty() && Units.empty() && LaunchOrder.empty()) {
      Units = Rec; // --page raw: the units row
      continue;
    }
    const std::string Id = Rec[CId];
    auto [It, New] = Launches.try_emplace(Id);
    if (New) {
      LaunchOrder.push_back(Id);
      It->second.kernel = baseKernelName(Rec[CKernel]);
    }
    const std::string W = where(Source, RecLine);
    if (Long) {
      const std::string &M = Rec[CMetric];
      if (M != MRequests && M != MInst && M != MHit && M != MDram)
        continue;
      auto V = parseValue(Rec[CValue], W, "Metric Value");
      if (!V)
        continue;
      double Scale = CUnit >= 0 ? unitScale(Rec[CUnit]) : 1;
      It->second.metrics[M] = checkedMetric(M, *V * Scale, W, "Metric Value");
    } else {
      for (const char *M : {MRequests, MInst, MHit, MDram}) {
        int C = column(Header, M);
        if (C < 0)
          continue;
        auto V = parseValue(Rec[C], W, M);
        if (!V)
          continue;
        double Scale = Units.empty() ? 1 : unitScale(Units[C]);
        It->second.metrics[M] = checkedMetric(M, *V * Scale, W, M);
      }
    }
  }

  // Combine launches per kernel name.
  struct Sum {
    double req = 0, inst = 0, hit = 0, dram = 0;
    unsigned hit_n = 0, dram_n = 0, launches = 0;
    bool req_seen = false, inst_seen = false;
  };
  std::map<std::string, Sum> Sums;
  std::vector<std::string> Names;
  for (const std::string &Id : LaunchOrder) {
    const Launch &L = Launches[Id];
    auto [It, New] = Sums.try_emplace(L.kernel);
    if (New)
      Names.push_back(L.kernel);
    Sum &S = It->second;
    ++S.launches;
    auto Get = [&](const char *M) -> const double * {
      auto F = L.metrics.find(M);
      return F == L.metrics.end() ? nullptr : &F->second;
    };
    if (auto *V = Get(MRequests)) {
      S.req += *V;
      S.req_seen = true;
    }
    if (auto *V = Get(MInst)) {
      S.inst += *V;
      S.inst_seen = true;
    }
    if (auto *V = Get(MHit)) {
      S.hit += *V;
      ++S.hit_n;
    }
    if (auto *V = Get(MDram)) {
      S.dram += *V;
      ++S.dram_n;
    }
  }
  std::vector<NcuMetrics> Out;
  for (const std::string &N : Names) {
    const Sum &S = Sums[N];
    NcuMetrics M;
    M.kernel = N;
    M.launches = S.launches;
    if (S.req_seen && S.inst_seen && S.inst > 0) {
      M.llc_apki = S.req * 1000.0 / S.inst;
      if (!std::isfinite(*M.llc_apki))
        throw InputError(Source, "(csv)",
                         "kernel '" + N + "': " + MRequests + " * 1000 / " +
                             MInst + " is not a finite llc_apki");
    }
    // Percentages, checked per row (checkedMetric).
    if (S.hit_n)
      M.llc_hit_rate = S.hit / S.hit_n / 100.0;
    if (S.dram_n)
      M.bw_util = S.dram / S.dram_n / 100.0;
    Out.push_back(std::move(M));
  }
  if (Out.empty())
    throw InputError(Source, "(csv)", "expected at least one kernel row");
  return Out;
}

} // namespace smpart::profiler
