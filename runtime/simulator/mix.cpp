#include "mix.hpp"

#include "smpart/policy/profile_loader.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

namespace smpart::sim {

namespace {
using policy::InputError;

double number(const nlohmann::json &J, const char *Key, double Default,
              double Min, const std::string &Source, const std::string &Path) {
  if (!J.contains(Key))
    return Default;
  const nlohmann::json &V = J[Key];
  if (!V.is_number() || V.get<double>() < Min)
    throw InputError(Source, Path + "." + Key,
                     "expected a number >= " + std::to_string(Min));
  return V.get<double>();
}
} // namespace

Mix loadMix(const std::string &Path) {
  Mix M;
  M.source = Path;
  const std::string Text = policy::readTextFile(Path);
  M.truth = policy::parseProfiles(Text, Path);
  // The loader does not know "mix": the one field it ignores on purpose.
  auto &W = M.truth.warnings;
  W.erase(std::remove_if(W.begin(), W.end(),
                         [](const std::string &X) {
                           return X.find(": mix: unknown field") !=
                                  std::string::npos;
                         }),
          W.end());
  nlohmann::json Doc = nlohmann::json::parse(Text, nullptr, false);
  if (!Doc.is_object() || !Doc.contains("mix") || !Doc["mix"].is_object())
    throw InputError(Path, "mix", "missing; expected the mix object");
  const nlohmann::json &J = Doc["mix"];
  M.name = J.value("name", std::filesystem::path(Path).stem().string());
  if (!J.contains("launches") || !J["launches"].is_array() ||
      J["launches"].empty())
    throw InputError(Path, "mix.launches", "expected a non-empty array");
  auto Known = [&](const std::string &Name) {
    return std::any_of(
        M.truth.kernels.begin(), M.truth.kernels.end(),
        [&](const policy::KernelProfile &K) { return K.name == Name; });
  };
  for (std::size_t I = 0; I < J["launches"].size(); ++I) {
    const nlohmann::json &L = J["launches"][I];
    const std::string P = "mix.launches[" + std::to_string(I) + "]";
    if (!L.is_object() || !L.contains("kernel") || !L["kernel"].is_string())
      throw InputError(Path, P + ".kernel", "expected a kernel name");
    Launch X;
    X.kernel = L["kernel"].get<std::string>();
    if (!Known(X.kernel))
      throw InputError(Path, P + ".kernel",
                       "expected one of kernels[].name, got \"" + X.kernel +
                           "\"");
    X.at_us = number(L, "at_ms", 0, 0, Path, P) * 1000.0;
    X.blocks = number(L, "blocks", 0, 1, Path, P);
    // A periodic stream: `count` launches `period_ms` apart.
    const double Count = number(L, "count", 1, 1, Path, P);
    const double Period = number(L, "period_ms", 0, 0, Path, P) * 1000.0;
    if (Count > 1 && Period <= 0)
      throw InputError(Path, P + ".period_ms",
                       "expected a period > 0 with count > 1");
    X.periodic = Count > 1;
    for (int N = 0; N < static_cast<int>(Count); ++N) {
      M.launches.push_back(X);
      X.at_us += Period;
    }
  }
  std::stable_sort(
      M.launches.begin(), M.launches.end(),
      [](const Launch &A, const Launch &B) { return A.at_us < B.at_us; });
  M.controller = M.truth;
  if (J.contains("unprofiled")) {
    if (!J["unprofiled"].is_array())
      throw InputError(Path, "mix.unprofiled", "expected an array of names");
    for (const nlohmann::json &N : J["unprofiled"]) {
      if (!N.is_string() || !Known(N.get<std::string>()))
        throw InputError(Path, "mix.unprofiled",
                         "expected names from kernels[].name");
      auto &Ks = M.controller.kernels;
      Ks.erase(std::remove_if(Ks.begin(), Ks.end(),
                              [&](const policy::KernelProfile &K) {
                                return K.name == N.get<std::string>();
                              }),
               Ks.end());
    }
  }
  if (J.contains("sim")) {
    const nlohmann::json &S = J["sim"];
    if (!S.is_object())
      throw InputError(Path, "mix.sim", "expected an object");
    M.sim.dt_us = number(S, "dt_us", M.sim.dt_us, 0.1, Path, "mix.sim");
    M.sim.ack_us = number(S, "ack_us", M.sim.ack_us, 0, Path, "mix.sim");
    M.sim.noise = number(S, "noise", M.sim.noise, 0, Path, "mix.sim");
    M.sim.seed = static_cast<unsigned>(
        number(S, "seed", M.sim.seed, 0, Path, "mix.sim"));
  }
  return M;
}

void misprofile(Mix &M, double Error) {
  double Sign = 1;
  for (policy::KernelProfile &K : M.controller.kernels) {
    const double Time = 1 + Sign * Error, Bw = 1 - Sign * Error;
    for (policy::SmPoint &P : K.by_sms)
      P.time_ms *= Time;
    for (policy::CtaPoint &P : K.by_ctas)
      P.time_ms *= Time;
    if (K.metrics.bw_util)
      K.metrics.bw_util = std::clamp(*K.metrics.bw_util * Bw, 0.0, 1.0);
    if (K.shared && K.shared->bw_util)
      K.shared->bw_util = std::clamp(*K.shared->bw_util * Bw, 0.0, 1.0);
    if (K.metrics.opt_ctas_per_sm)
      K.metrics.opt_ctas_per_sm = std::max(
          1, static_cast<int>(std::lround(*K.metrics.opt_ctas_per_sm * Time)));
    Sign = -Sign;
  }
}

} // namespace smpart::sim
