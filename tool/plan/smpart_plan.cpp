// smpart-plan: computes an allocation decision (smpart.plan/1) from a
// profile file (smpart.profiles/1) with one of the policies, evaluates a
// plan offline, or fits HSM's c1/c2. Every input problem is one line on
// stderr ("FILE: JSON.PATH: what was expected") and exit code 1; bad usage
// exits 2 (tool/common's convention).
#include "command_line.hpp"
#include "online_policies.hpp"
#include "smpart/policy/evaluator.hpp"
#include "smpart/policy/hsm_model.hpp"
#include "smpart/policy/policy.hpp"
#include "smpart/policy/profile_loader.hpp"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

using namespace smpart::policy;
using smpart::cli::CommandLine;

namespace {

const char *Help =
    R"(OVERVIEW: smpart-plan: which SMs and how many CTAs per SM each kernel gets

USAGE:
  smpart-plan --policy NAME --profiles FILE [-o FILE] [--explain]
              [--fair-threshold X] [--qos-target X] [--cd-loss X]
  smpart-plan --evaluate PLAN --profiles FILE [-o FILE]
  smpart-plan --fit-hsm FILE [-o FILE]
  smpart-plan --list-policies
  smpart-plan --help | --version

Computes which SMs and how many CTAs per SM each kernel gets, from isolated
and shared-mode profiles (schema smpart.profiles/1), and prints one
smpart.plan/1 JSON document.

OPTIONS:
  --policy NAME        allocation policy (see --list-policies)
  --profiles FILE      profile file (smpart.profiles/1)
  -o FILE              write the JSON document to FILE instead of stdout
  --explain            add the classification, the mode and every step taken
                       (e.g. each CD-search probe) to "notes"
  --fair-threshold X   hsm-fair: repartition while min/max NP < X (0.9)
  --qos-target X       hsm-qos: NP target when a kernel has no np_target (0.8)
  --cd-loss X          cd-search: tolerated performance loss (0.05)
  --evaluate PLAN      predict time, NP, STP, ANTT and fairness of PLAN from
                       the profile curves (no interference model; see README)
  --fit-hsm FILE       least-squares fit of HSM's c1, c2 from private-mode
                       kernels[].metrics.rbh / bw_util samples
  --list-policies      print the policy names with a one-line summary; the
                       online ones (SMPART_POLICY, smpartd) are marked
                       "online only" with the offline policy to plan with
  --help               print this help
  --version            print smpart-plan's version

Options take their value as `--name VALUE` or `--name=VALUE`. Unknown fields
of a profile file are warned about on stderr, naming their JSON path.

EXIT STATUS:
  0  the document was written
  1  the job failed: a bad input file (one line on stderr naming the file,
     the JSON path and what was expected), or the output cannot be written
  2  bad usage: unknown option, bad or missing value, an online-only
     policy (an error line and "see 'smpart-plan --help'")
)";

struct Options {
  std::optional<std::string> policy, profiles, out, evaluate, fit_hsm;
  bool list = false;
  PolicyOptions policy_options;
};

double parseFraction(const CommandLine &CL, const std::string &Flag,
                     const std::string &Text) {
  errno = 0;
  char *End = nullptr;
  double V = std::strtod(Text.c_str(), &End);
  if (Text.empty() || *End != '\0' || errno != 0 || !(V >= 0 && V <= 1))
    CL.usageError(Flag + ": expected a number in [0, 1], got '" + Text + "'");
  return V;
}

Options parseArgs(CommandLine &CL, int Argc, char **Argv) {
  Options O;
  CL.flag("--list-policies", O.list);
  CL.flag("--explain", O.policy_options.explain);
  CL.option("--policy", O.policy);
  CL.option("--profiles", O.profiles);
  CL.option("-o", O.out);
  CL.deprecatedAlias("--out", "-o");
  CL.option("--evaluate", O.evaluate);
  CL.option("--fit-hsm", O.fit_hsm);
  auto Fraction = [&](const char *Flag, double &Dst) {
    CL.option(Flag, [&CL, Flag, &Dst](const std::string &V) {
      Dst = parseFraction(CL, Flag, V);
    });
  };
  Fraction("--fair-threshold", O.policy_options.fair_threshold);
  Fraction("--qos-target", O.policy_options.qos_target);
  Fraction("--cd-loss", O.policy_options.cd_loss);
  CL.parse(Argc, Argv);
  return O;
}

/// A plan that leaves SMs without any kernel says so in its notes: how
/// many, which, and how many of them the policy gated on purpose.
void noteIdleSms(Plan &P) {
  if (P.num_sms <= 0)
    return;
  std::vector<bool> Used(P.num_sms, false);
  for (const KernelDecision &K : P.kernels)
    for (int S = std::max(0, K.sm_first);
         S < std::min(P.num_sms, K.sm_first + K.sms); ++S)
      Used[S] = true;
  int Idle = 0, First = -1;
  for (int S = 0; S < P.num_sms; ++S)
    if (!Used[S]) {
      ++Idle;
      if (First < 0)
        First = S;
    }
  if (Idle == 0)
    return;
  std::string Note = std::to_string(Idle) + " of " + std::to_string(P.num_sms) +
                     " SMs run no kernel (first idle SM " +
                     std::to_string(First) + ")";
  if (P.gated_sms > 0)
    Note += "; " + std::to_string(P.gated_sms) + " gated on purpose";
  P.notes.push_back(Note);
}

/// Loads \p Path and warns about the fields the loader ignored.
ProfileSet load(const CommandLine &CL, const std::string &Path) {
  ProfileSet Set = loadProfiles(Path);
  for (const std::string &W : Set.warnings)
    CL.warn(W);
  return Set;
}

/// A policy's predictions are finite for every profile the loader accepts;
/// if one is not, the profile is at fault and the plan is not written.
void requireFinitePredictions(const Plan &P, const ProfileSet &Set) {
  for (const KernelDecision &K : P.kernels) {
    if (!K.predicted_np || std::isfinite(*K.predicted_np))
      continue;
    std::size_t I = 0;
    while (I < Set.kernels.size() && Set.kernels[I].name != K.name)
      ++I;
    throw InputError(Set.source, kernelPath(I),
                     "expected values that give a finite predicted_np "
                     "for policy " +
                         P.policy);
  }
}

/// Writes \p Doc to -o (or stdout); never over one of the run's inputs.
int emit(const CommandLine &CL, const nlohmann::ordered_json &Doc,
         const Options &O) {
  std::vector<std::string> Inputs;
  for (const std::optional<std::string> *In :
       {&O.profiles, &O.evaluate, &O.fit_hsm})
    if (*In)
      Inputs.push_back(**In);
  return CL.writeOutput(O.out, Doc.dump(2) + "\n", Inputs);
}

/// The offline policy that plans what an online one decides live: its
/// name without "-online" where that is one (cd-search-online ->
/// cd-search), else its base (tlp-dynamic -> tlp).
std::string offlineFor(const smpart::online::OnlinePolicyInfo &I) {
  const std::string Name(I.name);
  const std::string Suffix = "-online";
  if (Name.size() > Suffix.size() &&
      Name.compare(Name.size() - Suffix.size(), Suffix.size(), Suffix) == 0) {
    const std::string Stem = Name.substr(0, Name.size() - Suffix.size());
    if (findPolicy(Stem))
      return Stem;
  }
  return std::string(I.base);
}

int run(const CommandLine &CL, const Options &O) {
  if (O.list) {
    for (const Policy *P : allPolicies())
      std::printf("%-16s %.*s\n", std::string(P->name()).c_str(),
                  static_cast<int>(P->summary().size()), P->summary().data());
    for (const smpart::online::OnlinePolicyInfo &I :
         smpart::online::onlinePolicies()) {
      std::string Summary(I.summary);
      const std::string Tag = " (online only)";
      if (Summary.size() >= Tag.size() &&
          Summary.compare(Summary.size() - Tag.size(), Tag.size(), Tag) == 0)
        Summary.resize(Summary.size() - Tag.size());
      std::printf("%-16s online only (plan offline with %s): %s\n",
                  std::string(I.name).c_str(), offlineFor(I).c_str(),
                  Summary.c_str());
    }
    return 0;
  }
  int Modes = bool(O.policy) + bool(O.evaluate) + bool(O.fit_hsm);
  if (Modes != 1)
    CL.usageError("expected exactly one of --policy, --evaluate, --fit-hsm");
  if (O.fit_hsm) {
    ProfileSet Set = load(CL, *O.fit_hsm);
    HsmFit Fit = fitHsmConstants(Set);
    // Two coefficients need more than two samples before r2 means
    // anything (two points always fit exactly), and HSM's model has
    // bandwidth rising with row-buffer hits: say so when the fit cannot
    // be trusted rather than hand it on silently.
    std::vector<std::string> Warnings;
    if (Fit.samples < 3)
      Warnings.push_back("underdetermined: " + std::to_string(Fit.samples) +
                         " samples for 2 coefficients (need at least 3); "
                         "r2 = 1 says nothing");
    // What a profile's gpu.hsm accepts (policies/profile_loader.cpp).
    if (std::abs(Fit.c1) > 1e6 || std::abs(Fit.c2) > 1e6)
      Warnings.push_back(
          "coefficient out of range (c1 = " + std::to_string(Fit.c1) +
          ", c2 = " + std::to_string(Fit.c2) +
          "): a profile's gpu.hsm takes [-1e6, 1e6]; the "
          "samples' rbh values are too close together");
    if (Fit.c1 < 0 || Fit.c2 < 0)
      Warnings.push_back(
          "negative coefficient (c1 = " + std::to_string(Fit.c1) +
          ", c2 = " + std::to_string(Fit.c2) +
          "); the samples do not follow bw_util = c1 * rbh + "
          "c2; keep the defaults or measure more kernels");
    for (const std::string &W : Warnings)
      CL.warn(*O.fit_hsm + ": " + W);
    nlohmann::ordered_json Doc = {{"schema", "smpart.hsm-fit/1"},
                                  {"c1", Fit.c1},
                                  {"c2", Fit.c2},
                                  {"r2", Fit.r2},
                                  {"samples", Fit.samples}};
    if (!Warnings.empty())
      Doc["warnings"] = Warnings;
    return emit(CL, Doc, O);
  }
  if (!O.profiles)
    CL.usageError("--profiles FILE is required");
  if (O.evaluate) {
    std::vector<std::string> Warnings;
    Plan P = parsePlan(readTextFile(*O.evaluate), *O.evaluate, &Warnings);
    for (const std::string &W : Warnings)
      CL.warn(W);
    ProfileSet Set = load(CL, *O.profiles);
    nlohmann::ordered_json Doc =
        evaluationToJson(evaluatePlan(P, Set, *O.evaluate));
    Doc["policy"] = P.policy;
    return emit(CL, Doc, O);
  }
  const Policy *Pol = findPolicy(*O.policy);
  if (const smpart::online::OnlinePolicyInfo *I =
          smpart::online::findOnlinePolicy(*O.policy);
      !Pol && I)
    CL.usageError("policy '" + *O.policy +
                  "' is online only: it decides every epoch from what the "
                  "running kernels show, so profiles alone give no plan; "
                  "use --policy " +
                  offlineFor(*I) + " here, or run it with SMPART_POLICY=" +
                  *O.policy + " or smpartd --policy " + *O.policy);
  if (!Pol) {
    std::string Names;
    for (const Policy *P : allPolicies())
      Names += (Names.empty() ? "" : ", ") + std::string(P->name());
    CL.usageError("unknown policy '" + *O.policy + "'; expected one of " +
                  Names);
  }
  ProfileSet Set = load(CL, *O.profiles);
  Plan Decided = Pol->decide(Set, O.policy_options);
  requireFinitePredictions(Decided, Set);
  noteIdleSms(Decided);
  return emit(CL, planToJson(Decided), O);
}

} // namespace

int main(int Argc, char **Argv) {
  CommandLine CL("smpart-plan", Help);
  Options O = parseArgs(CL, Argc, Argv);
  try {
    return run(CL, O);
  } catch (const InputError &E) {
    return CL.fail(E.what());
  } catch (const std::exception &E) {
    // Not expected: every input problem is an InputError. Still one line.
    return CL.fail(std::string("internal error: ") + E.what());
  }
}
