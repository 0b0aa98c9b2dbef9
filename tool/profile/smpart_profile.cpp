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
// A bad input file or a failed write: one line on stderr, exit 1; bad
// usage: exit 2 (tool/common's convention).
#include "command_line.hpp"
#include "smpart/policy/input_error.hpp"
#include "smpart/policy/profile_loader.hpp"
#include "smpart/profiler.hpp"

#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unistd.h>

using namespace smpart;

namespace {
const char *Help =
    R"(OVERVIEW: smpart-profile: profile-file utilities that need no GPU

USAGE:
  smpart-profile merge-ncu --profiles IN.json --ncu ncu.csv [-o OUT.json]
  smpart-profile ncu-metrics
  smpart-profile --help | --version

COMMANDS:
  merge-ncu     set kernels[].metrics.llc_apki / llc_hit_rate / bw_util of
                IN.json from an Nsight Compute CSV export (kernels matched
                by name); other fields are kept; the result is validated
                and written atomically to OUT.json (default stdout)
  ncu-metrics   print the metric list to pass to ncu --metrics

OPTIONS:
  --profiles IN.json   profile file (smpart.profiles/1) to merge into
  --ncu ncu.csv        Nsight Compute CSV export (ncu --csv --page details)
  -o OUT.json          write the merged profiles here instead of stdout
  --help               print this help
  --version            print smpart-profile's version

Options take their value as `--name VALUE` or `--name=VALUE`.

EXIT STATUS:
  0  success
  1  the job failed: a bad input file (one line naming the file and what
     was expected) or the output cannot be written
  2  bad usage: unknown command or option, missing value or argument (an
     error line and "see 'smpart-profile --help'")
)";
} // namespace

int main(int Argc, char **Argv) {
  cli::CommandLine CL("smpart-profile", Help);
  std::optional<std::string> Cmd, InOpt, CsvOpt, OutOpt;
  CL.positional([&](const std::string &A) {
    if (Cmd)
      CL.usageError("unexpected argument '" + A + "'");
    if (A != "merge-ncu" && A != "ncu-metrics")
      CL.usageError("unknown command '" + A +
                    "'; expected merge-ncu or ncu-metrics");
    Cmd = A;
  });
  CL.option("--profiles", InOpt);
  CL.option("--ncu", CsvOpt);
  CL.option("-o", OutOpt);
  CL.deprecatedAlias("--out", "-o");
  CL.parse(Argc, Argv);
  if (!Cmd)
    CL.usageError("expected a command: merge-ncu or ncu-metrics");
  if (*Cmd == "ncu-metrics") {
    if (InOpt || CsvOpt || OutOpt)
      CL.usageError("ncu-metrics takes no options");
    std::printf("%s\n", profiler::ncuMetricList());
    return cli::ExitSuccess;
  }
  if (!InOpt)
    CL.usageError("merge-ncu: --profiles IN.json is required");
  if (!CsvOpt)
    CL.usageError("merge-ncu: --ncu ncu.csv is required");
  const std::string In = *InOpt, Csv = *CsvOpt;
  auto fail = [&](const std::string &Msg) { return CL.fail(Msg); };
  try {
    // One clear error for a bad input file; its unknown fields are warned
    // about (they are kept as they are).
    for (const std::string &W : policy::loadProfiles(In).warnings)
      CL.warn(W);
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
        // A kernel the CSV has none of smpart's metrics for is left as it
        // was (no "metrics": null) and not counted.
        if (!M.llc_apki && !M.llc_hit_rate && !M.bw_util)
          continue;
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
    policy::parseProfiles(Text, "the merged profiles");
    // -o may be the --profiles file: merging into it is an update in
    // place (read whole above, written atomically). Never the CSV.
    if (const int Status = CL.writeOutput(OutOpt, Text, {Csv}))
      return Status;
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
