// smpart_corun_sim: co-runs on the contention model under the real
// controller (README).
//
//   smpart_corun_sim MIX.json --policy NAME [--trace OUT.json] [--no-noise]
//                    [--profile-error F] [--relaunch]
//   smpart_corun_sim --table MIX.json... [--no-noise] [--profile-error F]
//                    [--wrong-profiles F] [--relaunch]
//   smpart_corun_sim --latency MIX.json... [--no-noise] [--profile-error F]
//
// The first prints each kernel's turnaround and NP, then STP, ANTT and
// fairness; the second prints, per mix, every policy against even and the
// best static configuration of the model, as a Markdown table; the third,
// per mix, latency-critical launch latency and best-effort throughput
// against alone (latency.hpp), also printed under a single run of a mix
// with a stream of high-priority launches.
// --profile-error F gives the controller profiles wrong by F (mix.hpp,
// misprofile(); negative: each kernel wrong the other way); the model
// keeps the truth. --wrong-profiles F (0.3 by default) is the error under
// which the table compares each online policy with its offline version.
// --relaunch measures as the papers do (RunOptions::relaunch): a kernel that
// finishes first is launched again until every first run has finished.
#include "corun.hpp"
#include "latency.hpp"
#include "objective.hpp"
#include "online_policies.hpp"
#include "static_search.hpp"

#include "smpart/detail/output_file.hpp"
#include "smpart/policy/input_error.hpp"
#include "smpart/policy/policy.hpp"
#include "smpart/trace.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <optional>
#include <string>
#include <vector>

using namespace smpart;
using sim::Objective;
using sim::objectiveOf;

namespace {

double ProfileError = 0;
/// The profile error of the table's "beats offline" figure (the online
/// policies are held to beating their offline versions under profiles
/// wrong by 30 %); --wrong-profiles -0.3 makes each kernel wrong the other
/// way.
double WrongProfiles = 0.3;

/// How wrong, in percent, and which way, for the table's labels.
double wrongPercent() { return std::abs(WrongProfiles) * 100; }
const char *wrongWay() { return WrongProfiles < 0 ? " (the other way)" : ""; }

/// Parses a fraction in (-1, 1) for \p Option; false, with a message.
bool fraction(const char *Option, const char *Text, double &Out) {
  char *End = nullptr;
  Out = std::strtod(Text, &End);
  if (End == Text || *End || !(Out > -1 && Out < 1)) {
    std::fprintf(stderr,
                 "smpart_corun_sim: %s %s: expected a fraction in (-1, 1)\n",
                 Option, Text);
    return false;
  }
  return true;
}

sim::Mix load(const std::string &Path) {
  sim::Mix M = sim::loadMix(Path);
  sim::misprofile(M, ProfileError);
  for (const std::string &W : M.truth.warnings)
    std::fprintf(stderr, "smpart_corun_sim: warning: %s\n", W.c_str());
  return M;
}

int usage(const char *Argv0) {
  std::fprintf(stderr,
               "usage: %s MIX.json --policy NAME [--trace OUT.json] "
               "[--no-noise] [--profile-error F] [--relaunch]\n"
               "       %s --table MIX.json... [--no-noise] "
               "[--profile-error F] [--wrong-profiles F] [--relaunch]\n"
               "       %s --latency MIX.json... [--no-noise] "
               "[--profile-error F]\n",
               Argv0, Argv0, Argv0);
  return 2;
}

void printRun(const sim::Mix &M, const std::string &Policy,
              const sim::RunResult &R) {
  std::printf("%s (%s) under %s: %.3f ms, %llu decisions, %llu epochs, "
              "%llu deferred grants, %llu re-launches\n",
              M.source.c_str(), M.name.c_str(), Policy.c_str(),
              R.end_us / 1000.0, R.decisions, R.epochs, R.deferred_grants,
              R.relaunches);
  for (const sim::KernelResult &K : R.kernels)
    std::printf("  %s #%llu: %.3f .. %.3f ms, alone %.3f ms, NP %.3f\n",
                K.name.c_str(), K.id, K.arrival_us / 1000.0,
                K.finish_us / 1000.0, K.alone_us / 1000.0, K.np);
  std::printf("  STP %.3f  ANTT %.3f  fairness %.3f\n", R.metrics.stp,
              R.metrics.antt, R.metrics.fairness);
  if (sim::hasLatencyCriticalStream(M))
    sim::printLatency(sim::latencyOf(M, R));
}

bool healthy(const sim::RunResult &R, const std::string &What) {
  if (R.completed && R.shared_sm_steps == 0 && R.exactly_once_violations == 0)
    return true;
  std::fprintf(stderr,
               "smpart_corun_sim: %s: completed %d, steps with a shared SM "
               "%llu, exactly-once violations %llu\n",
               What.c_str(), R.completed, R.shared_sm_steps,
               R.exactly_once_violations);
  return false;
}

constexpr double Tolerance = 0.05; ///< "within 5 % of its best static"
/// Closer than this to its offline version, an online policy is level
/// with it, not better (sim::level).
constexpr double LevelMargin = 0.005;

/// The offline policy an online one is the online half of: X for
/// X-online (cd-search-online runs `even` on events, but its offline
/// version is `cd-search`), else the one it re-plans events with.
std::string offlineVersion(const online::OnlinePolicyInfo &I) {
  const std::string Name(I.name);
  const std::string Suffix = "-online";
  if (Name.size() > Suffix.size() &&
      Name.compare(Name.size() - Suffix.size(), Suffix.size(), Suffix) == 0 &&
      policy::findPolicy(Name.substr(0, Name.size() - Suffix.size())))
    return Name.substr(0, Name.size() - Suffix.size());
  return std::string(I.base);
}

/// Per online policy, over the mixes of a table.
struct Tally {
  int within = 0, mixes = 0, beats = 0, level = 0, compared = 0;
  int space_within = 0; ///< within 5 % of the best of its own space
  /// Not beaten, and nothing to beat: the offline version, profiles
  /// wrong, is within the level margin of the best static configuration
  /// of the policy's own space, or above it.
  int no_headroom = 0;
};

/// One row of the per-mix table of the online policies.
struct OnlineRow {
  std::string mix, policy, objective, value, best, wrong, offline;
  double ratio = 0;
  bool within = false, beats = false, level = false;
  /// Against the best static configuration of the space the policy
  /// decides in (SearchResult::spatial or ::sharing).
  std::string space_best = "—";
  double space_ratio = 0;
  bool space_within = false;
  /// That best static configuration's value, for the offline version
  /// with wrong profiles to be measured against.
  std::optional<sim::ObjectiveValue> space_value;
};

int table(const std::vector<std::string> &Files, bool Noise, bool Relaunch) {
  std::printf("| mix | policy | STP | ANTT | fairness | STP / even | STP / "
              "best static | objective | value | / its best static | within "
              "5 %% |\n|---|---|---:|---:|---:|---:|---:|---|---:|---:|:-:|\n");
  bool Ok = true;
  const std::vector<Objective> Goals = {Objective::Stp, Objective::Fairness,
                                        Objective::Qos};
  std::map<std::string, Tally> Tallies;
  Tally Priority;
  std::vector<OnlineRow> Rows;
  for (const std::string &F : Files) {
    sim::Mix M = load(F);
    sim::RunOptions O;
    O.noise = Noise;
    O.relaunch = Relaunch;
    O.spatial = true;
    const sim::RunResult Even = sim::runMix(M, *policy::findPolicy("even"), O);
    const std::vector<sim::SearchResult> Best =
        sim::searchBestStatics(M, O, Goals);
    auto BestBy = [&](Objective G) -> const sim::SearchResult & {
      return Best[static_cast<std::size_t>(
          std::find(Goals.begin(), Goals.end(), G) - Goals.begin())];
    };
    std::map<std::string, OnlineRow> Online; // this mix's, by policy
    auto Row = [&](const std::string &Name, const sim::RunResult &R,
                   std::optional<Objective> G) -> OnlineRow {
      const sim::Metrics &X = R.metrics;
      std::printf("| %s | %s | %.3f | %.3f | %.3f | %.3f | %.3f |",
                  M.name.c_str(), Name.c_str(), X.stp, X.antt, X.fairness,
                  X.stp / Even.metrics.stp,
                  X.stp / BestBy(Objective::Stp).result.metrics.stp);
      OnlineRow Out;
      Out.mix = M.name;
      Out.policy = Name;
      if (!G) {
        std::printf(" latency (`--latency`) | | | |\n");
        return Out;
      }
      const sim::ObjectiveValue V = sim::evaluate(M, R, *G);
      const sim::ObjectiveValue B = sim::evaluate(M, BestBy(*G).result, *G);
      Out.objective = sim::objectiveName(*G);
      Out.value = V.describe();
      Out.best = B.describe();
      Out.ratio = B.value > 0 ? V.value / B.value : 0.0;
      Out.within = sim::within(V, B, Tolerance);
      std::printf(" %s | %s | %.3f | %s |\n", Out.objective.c_str(),
                  Out.value.c_str(), Out.ratio, Out.within ? "yes" : "no");
      return Out;
    };
    for (const std::string &Name : sim::policyNames()) {
      O.spatial = sim::isSpatialPolicy(Name);
      const sim::RunResult R = sim::runPolicy(M, Name, O);
      Ok = healthy(R, M.source + " under " + Name) && Ok;
      const bool Latency = Name == "priority";
      OnlineRow X = Row(
          Name, R, Latency ? std::nullopt : std::optional(objectiveOf(Name)));
      if (Latency && sim::hasLatencyCriticalStream(M)) {
        const sim::LatencyReport L = sim::latencyOf(M, R);
        ++Priority.mixes;
        Priority.within += L.meetsTargets();
        X.objective = "latency targets";
        X.value = L.meetsTargets() ? "met" : "missed";
        X.best = "—";
        X.within = L.meetsTargets();
        Online[Name] = X;
      }
      if (Latency || !online::findOnlinePolicy(Name))
        continue;
      const Objective G = objectiveOf(Name);
      const bool Spatial = sim::isSpatialPolicy(Name);
      if (const std::optional<sim::StaticRun> &Space =
              Spatial ? BestBy(G).spatial : BestBy(G).sharing) {
        const sim::ObjectiveValue V = sim::evaluate(M, R, G);
        const sim::ObjectiveValue B = sim::evaluate(M, Space->result, G);
        X.space_best = B.describe() + " (" + Space->config.describe() + ")";
        X.space_ratio = B.value > 0 ? V.value / B.value : 0.0;
        X.space_within = sim::within(V, B, Tolerance);
        X.space_value = B;
      }
      Tally &T = Tallies[Name];
      ++T.mixes;
      T.within += X.within;
      T.space_within += X.space_within;
      Online[Name] = X;
    }
    for (Objective G : Goals)
      Row(std::string(G == Objective::Stp        ? "best static"
                      : G == Objective::Fairness ? "fairest static"
                                                 : "best static for QoS") +
              " (" + std::to_string(BestBy(G).evaluated) +
              " tried: " + BestBy(G).best.describe() + ")",
          BestBy(G).result, G);

    auto this_mix = [&](std::string_view Name) -> OnlineRow & {
      return Online[std::string(Name)];
    };
    // Each online policy against its offline version, profiles 30 % wrong
    // (--wrong-profiles).
    sim::Mix Wrong = sim::loadMix(F);
    sim::misprofile(Wrong, WrongProfiles);
    for (const online::OnlinePolicyInfo &I : online::onlinePolicies()) {
      sim::RunOptions W;
      W.noise = Noise;
      W.relaunch = Relaunch;
      W.spatial = sim::isSpatialPolicy(I.name);
      const sim::RunResult OnlineRun = sim::runPolicy(Wrong, I.name, W);
      Ok = healthy(OnlineRun, M.source + " under " + std::string(I.name) +
                                  ", profiles wrong") &&
           Ok;
      if (I.name == "priority") {
        if (sim::hasLatencyCriticalStream(Wrong)) {
          const bool Met = sim::latencyOf(Wrong, OnlineRun).meetsTargets();
          ++Priority.compared;
          Priority.beats += Met;
          OnlineRow &X = this_mix(I.name);
          X.wrong = Met ? "met" : "missed";
          X.offline = "—";
        }
        continue;
      }
      const std::string Base = offlineVersion(I);
      W.spatial = sim::isSpatialPolicy(Base);
      const sim::RunResult Offline = sim::runPolicy(Wrong, Base, W);
      const Objective G = objectiveOf(I.name);
      Tally &T = Tallies[std::string(I.name)];
      const sim::ObjectiveValue On = sim::evaluate(Wrong, OnlineRun, G);
      const sim::ObjectiveValue Off = sim::evaluate(Wrong, Offline, G);
      OnlineRow &X = this_mix(I.name);
      X.wrong = On.describe();
      X.offline = "`" + Base + "` " + Off.describe();
      X.level = sim::level(On, Off, LevelMargin);
      X.beats = !X.level && sim::better(On, Off);
      ++T.compared;
      T.beats += X.beats;
      T.level += X.level;
      // The model keeps the truth, so the best static configuration is
      // the same with wrong profiles: an offline plan already at it leaves
      // the online policy nothing to win.
      if (!X.beats && X.space_value)
        T.no_headroom += sim::level(Off, *X.space_value, LevelMargin) ||
                         sim::better(Off, *X.space_value);
    }
    for (const online::OnlinePolicyInfo &I : online::onlinePolicies())
      if (auto It = Online.find(std::string(I.name)); It != Online.end())
        Rows.push_back(It->second);
  }
  // Per mix, each online policy against the best static configuration by
  // its objective, and against its offline version with wrong profiles.
  std::printf("\n| mix | online policy | objective | value | best static "
              "by it | / best static | within 5 %% | best static of its "
              "space | / it | within 5 %% | %.0f %% wrong%s: online | "
              "%.0f %% wrong%s: offline | beats offline |\n"
              "|---|---|---|---:|---:|---:|:-:|---:|---:|:-:|---:|---:|:-:|\n",
              wrongPercent(), wrongWay(), wrongPercent(), wrongWay());
  for (const OnlineRow &X : Rows) {
    const bool Space = X.space_best != "—";
    std::printf(
        "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
        X.mix.c_str(), X.policy.c_str(), X.objective.c_str(), X.value.c_str(),
        X.best.c_str(),
        X.best == "—" ? "—" : policy::formatNote("%.3f", X.ratio).c_str(),
        X.within ? "yes" : "no", X.space_best.c_str(),
        Space ? policy::formatNote("%.3f", X.space_ratio).c_str() : "—",
        !Space           ? "—"
        : X.space_within ? "yes"
                         : "no",
        X.wrong.c_str(), X.offline.c_str(),
        X.offline == "—" ? "—"
        : X.beats        ? "yes"
        : X.level        ? "level"
                         : "no");
  }
  std::printf("\n");
  for (const online::OnlinePolicyInfo &I : online::onlinePolicies()) {
    if (I.name == "priority") {
      std::printf("priority: judged on the latency-critical mixes (its "
                  "objective: p99 / alone <= %.2f, best effort >= %.2f): "
                  "targets met on %d/%d; with %.0f %% wrong profiles%s on "
                  "%d/%d\n",
                  sim::LatencyTarget, sim::ThroughputTarget, Priority.within,
                  Priority.mixes, wrongPercent(), wrongWay(), Priority.beats,
                  Priority.compared);
      continue;
    }
    const Tally &T = Tallies[std::string(I.name)];
    std::printf("%s: within 5%% of its objective's best static on %d/%d "
                "mixes (of the best %s: %d/%d); beats offline with %.0f%% "
                "wrong profiles%s on %d/%d (level within %.1f%% on %d; "
                "where not beaten, the offline plan is already within "
                "%.1f%% of the best of its space on %d)\n",
                std::string(I.name).c_str(), T.within, T.mixes,
                sim::isSpatialPolicy(I.name) ? "SM partition"
                                             : "configuration sharing SMs",
                T.space_within, T.mixes, wrongPercent(), wrongWay(), T.beats,
                T.compared, LevelMargin * 100, T.level, LevelMargin * 100,
                T.no_headroom);
  }
  return Ok ? 0 : 1;
}

} // namespace

int main(int Argc, char **Argv) {
  std::vector<std::string> Files;
  std::string Policy, TracePath;
  bool Table = false, Noise = true, Latency = false, Relaunch = false;
  for (int I = 1; I < Argc; ++I) {
    const std::string A = Argv[I];
    if (A == "--policy" && I + 1 < Argc)
      Policy = Argv[++I];
    else if (A == "--trace" && I + 1 < Argc)
      TracePath = Argv[++I];
    else if (A == "--table")
      Table = true;
    else if (A == "--latency")
      Latency = Table = true; // a table of its own
    else if (A == "--no-noise")
      Noise = false;
    else if (A == "--relaunch")
      Relaunch = true;
    else if (A == "--profile-error" && I + 1 < Argc) {
      if (!fraction("--profile-error", Argv[++I], ProfileError))
        return 2;
    } else if (A == "--wrong-profiles" && I + 1 < Argc) {
      if (!fraction("--wrong-profiles", Argv[++I], WrongProfiles))
        return 2;
    } else if (!A.empty() && A[0] == '-')
      return usage(Argv[0]);
    else
      Files.push_back(A);
  }
  if (Files.empty() || (Table == !Policy.empty()) ||
      (!Table && Files.size() != 1) || (Latency && Relaunch))
    return usage(Argv[0]);
  try {
    if (Latency) {
      std::vector<sim::Mix> Mixes;
      for (const std::string &F : Files)
        Mixes.push_back(load(F));
      return sim::printLatencyTable(Mixes, Noise) ? 0 : 1;
    }
    if (Table)
      return table(Files, Noise, Relaunch);
    const std::vector<std::string> Names = sim::policyNames();
    if (std::find(Names.begin(), Names.end(), Policy) == Names.end()) {
      std::fprintf(stderr, "smpart_corun_sim: unknown policy %s\n",
                   Policy.c_str());
      return 2;
    }
    sim::Mix M = load(Files[0]);
    std::unique_ptr<trace::TraceWriter> Trace;
    std::string Err;
    if (const std::string In =
            smpart::detail::inputReplacedBy(TracePath, Files);
        !TracePath.empty() && !In.empty()) {
      std::fprintf(stderr,
                   "smpart_corun_sim: --trace: cannot write '%s': it is "
                   "'%s', an input of this run\n",
                   TracePath.c_str(), In.c_str());
      return 2;
    }
    if (!TracePath.empty() &&
        !(Trace = trace::TraceWriter::open(TracePath, &Err))) {
      std::fprintf(stderr, "smpart_corun_sim: %s\n", Err.c_str());
      return 2;
    }
    sim::RunOptions O;
    O.noise = Noise;
    O.relaunch = Relaunch;
    O.trace = Trace.get();
    O.spatial = sim::isSpatialPolicy(Policy);
    const sim::RunResult R = sim::runPolicy(M, Policy, O);
    printRun(M, Policy, R);
    if (Trace && !Trace->flush(&Err)) {
      std::fprintf(stderr, "smpart_corun_sim: %s\n", Err.c_str());
      return 1;
    }
    if (Trace)
      std::printf("  trace %s\n", TracePath.c_str());
    return healthy(R, M.source) ? 0 : 1;
  } catch (const std::exception &E) {
    std::fprintf(stderr, "smpart_corun_sim: %s\n", E.what());
    return 2;
  }
}
