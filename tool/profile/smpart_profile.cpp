// smpart-profile: profile-file utilities that need no GPU.
//
//   smpart-profile merge-ncu --profiles IN.json --ncu ncu.csv [-o OUT.json]
//
// Sets kernels[].metrics.llc_apki / llc_hit_rate / bw_util of IN.json from
// an Nsight Compute CSV export (see runtime/profiler/README.md for the
// metrics; `smpart-profile ncu-metrics` prints the list for --metrics).
// Other fields are kept as they are. Kernels are matched by name (ncu's
// name without "void " and the argument list); a kernel of the CSV that the
// profiles do not have is reported on stderr and skipped. The result is
// validated with the profile loader before it is written (atomically).
// Errors: one line on stderr, exit 2.
#include "smpart/policy/input_error.hpp"
#include "smpart/policy/profile_loader.hpp"
#include "smpart/profiler.hpp"

#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <unistd.h>

using namespace smpart;

namespace {
int usage() {
  std::fprintf(
      stderr,
      "usage: smpart-profile merge-ncu --profiles IN.json --ncu ncu.csv "
      "[-o OUT.json]\n"
      "       smpart-profile ncu-metrics\n");
  return 2;
}

int fail(const std::string &Msg) {
  std::fprintf(stderr, "smpart-profile: %s\n", Msg.c_str());
  return 2;
}
} // namespace

int main(int Argc, char **Argv) {
  if (Argc < 2)
    return usage();
  const std::string Cmd = Argv[1];
  if (Cmd == "ncu-metrics") {
    std::printf("%s\n", profiler::ncuMetricList());
    return 0;
  }
  if (Cmd != "merge-ncu")
    return usage();
  std::string In, Csv, Out;
  for (int I = 2; I < Argc; ++I) {
    std::string A = Argv[I];
    auto Next = [&](std::string &Dst) {
      if (I + 1 >= Argc)
        return false;
      Dst = Argv[++I];
      return true;
    };
    if ((A == "--profiles" && Next(In)) || (A == "--ncu" && Next(Csv)) ||
        ((A == "-o" || A == "--out") && Next(Out)))
      continue;
    return usage();
  }
  if (In.empty() || Csv.empty())
    return usage();
  try {
    policy::loadProfiles(In); // one clear error for a bad input file
    nlohmann::ordered_json Doc =
        nlohmann::ordered_json::parse(policy::readTextFile(In));
    std::vector<profiler::NcuMetrics> Metrics =
        profiler::importNcuCsv(policy::readTextFile(Csv), Csv);
    int Merged = 0;
    for (const profiler::NcuMetrics &M : Metrics) {
      bool Found = false;
      for (auto &K : Doc["kernels"]) {
        if (K["name"] != M.kernel)
          continue;
        Found = true;
        auto &J = K["metrics"];
        if (M.llc_apki)
          J["llc_apki"] = *M.llc_apki;
        if (M.llc_hit_rate)
          J["llc_hit_rate"] = *M.llc_hit_rate;
        if (M.bw_util)
          J["bw_util"] = *M.bw_util;
        ++Merged;
      }
      if (!Found)
        std::fprintf(stderr,
                     "smpart-profile: %s: kernel '%s' is not in %s; skipped\n",
                     Csv.c_str(), M.kernel.c_str(), In.c_str());
    }
    const std::string Text = Doc.dump(2) + "\n";
    policy::parseProfiles(Text, Out.empty() ? "(output)" : Out);
    if (Out.empty()) {
      std::fputs(Text.c_str(), stdout);
    } else {
      const std::string Tmp = Out + ".tmp." + std::to_string(getpid());
      std::FILE *F = std::fopen(Tmp.c_str(), "wb");
      bool Ok = F && std::fwrite(Text.data(), 1, Text.size(), F) == Text.size();
      if (F)
        Ok = std::fclose(F) == 0 && Ok;
      if (!Ok || std::rename(Tmp.c_str(), Out.c_str()) != 0) {
        std::remove(Tmp.c_str());
        return fail(Out + ": cannot write: " + std::strerror(errno));
      }
    }
    std::fprintf(
        stderr,
        "smpart-profile: merged Nsight Compute metrics of %d kernel(s)\n",
        Merged);
    return 0;
  } catch (const policy::InputError &E) {
    return fail(E.what());
  } catch (const std::exception &E) {
    return fail(In + ": " + E.what());
  }
}
