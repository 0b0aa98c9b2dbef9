// SMPART_POLICY / SMPART_PROFILES / SMPART_TRACE / SMPART_PROFILE /
// SMPART_EPOCH_US, checked without CUDA. runtime_glue.cpp feeds it the device's
// SM ids.
#include "smpart/controller.hpp"

#include "online_policies.hpp"

#include "smpart/detail/output_file.hpp"
#include "smpart/policy/profile_loader.hpp"
#include "smpart/trace.hpp"

#include <cmath>
#include <cstdlib>
#include <filesystem>

namespace smpart::controller {

namespace {
std::string policyList() {
  std::string S;
  for (const policy::Policy *P : policy::allPolicies())
    S += (S.empty() ? "" : ", ") + std::string(P->name());
  for (const online::OnlinePolicyInfo &I : online::onlinePolicies())
    S += ", " + std::string(I.name);
  return S;
}

std::string value(const std::function<const char *(const char *)> &GetEnv,
                  const char *Name) {
  const char *V = GetEnv(Name);
  return V ? std::string(V) : std::string();
}

/// SMPART_EPOCH_US: microseconds, MinEpochUs .. 10 s; false if malformed.
bool parseEpochUs(const std::string &Text, double &Out) {
  if (Text.empty())
    return false;
  char *End = nullptr;
  const double V = std::strtod(Text.c_str(), &End);
  if (End != Text.c_str() + Text.size() || !std::isfinite(V) ||
      V < MinEpochUs || V > 1e7)
    return false;
  Out = V;
  return true;
}

bool parentWritable(const std::string &Path) {
  std::filesystem::path P(Path);
  std::filesystem::path Dir = P.parent_path();
  if (Dir.empty())
    Dir = ".";
  std::error_code EC;
  return std::filesystem::is_directory(Dir, EC);
}
} // namespace

bool isPolicyName(const std::string &Name) {
  const online::OnlinePolicyInfo *Online = online::findOnlinePolicy(Name);
  return policy::findPolicy(Online ? Online->base : Name) != nullptr;
}

EnvConfig configureFromEnvironment(
    const std::function<const char *(const char *)> &GetEnv,
    const std::vector<unsigned> &SmIds) {
  EnvConfig C;
  const std::string PolicyName = value(GetEnv, "SMPART_POLICY");
  const std::string ProfilesPath = value(GetEnv, "SMPART_PROFILES");
  const std::string TracePath = value(GetEnv, "SMPART_TRACE");
  const std::string ProfileOut = value(GetEnv, "SMPART_PROFILE");
  const std::string Suffix = "; running without the controller";

  if (PolicyName.empty() && ProfilesPath.empty() && TracePath.empty() &&
      ProfileOut.empty())
    return C;

  const policy::Policy *Pol = nullptr;
  const online::OnlinePolicyInfo *Online = nullptr;
  if (!PolicyName.empty()) {
    // An online policy plans arrivals with its offline base.
    Online = online::findOnlinePolicy(PolicyName);
    Pol = policy::findPolicy(Online ? Online->base : PolicyName);
    if (!Pol) {
      C.error = "smpart: SMPART_POLICY=" + PolicyName +
                ": unknown policy (one of: " + policyList() + ")" + Suffix;
      return C;
    }
  } else if (!ProfilesPath.empty()) {
    C.error = "smpart: SMPART_PROFILES is set but SMPART_POLICY is not "
              "(one of: " +
              policyList() + ")" + Suffix;
    return C;
  }
  double EpochUs = DefaultEpochUs;
  if (const char *E = GetEnv("SMPART_EPOCH_US");
      E && !parseEpochUs(E, EpochUs)) {
    C.error = "smpart: SMPART_EPOCH_US=" + std::string(E) +
              ": expected the epoch length in microseconds, a number from " +
              std::to_string(static_cast<int>(MinEpochUs)) + " to 10000000" +
              Suffix;
    return C;
  }
  if (Pol && ProfilesPath.empty() && Pol->name() != "even") {
    C.error = "smpart: SMPART_POLICY=" + PolicyName +
              " needs SMPART_PROFILES=profiles.json (only even runs without "
              "profiles)" +
              Suffix;
    return C;
  }
  if (!ProfileOut.empty() && Pol) {
    C.error = "smpart: SMPART_PROFILE measures kernels alone; unset "
              "SMPART_POLICY to profile" +
              Suffix;
    return C;
  }
  if (!ProfileOut.empty() && !parentWritable(ProfileOut)) {
    C.error = "smpart: SMPART_PROFILE=" + ProfileOut +
              ": directory does not exist" + Suffix;
    return C;
  }
  if ((Pol || !ProfileOut.empty()) && SmIds.empty()) {
    // deviceInfo() waited for the SM-id probe and it did not see every
    // SM (another process keeps them busy): plans cannot name real SMs,
    // nor can a profiling sweep give a kernel half of them.
    C.error =
        "smpart: " +
        (Pol ? "SMPART_POLICY=" + PolicyName : "SMPART_PROFILE=" + ProfileOut) +
        ": the GPU's SM ids are unknown (the SM-id probe did not "
        "reach every SM within 2 s: is another process keeping the "
        "GPU busy?)" +
        Suffix;
    return C;
  }

  policy::ProfileSet Profiles;
  if (!ProfilesPath.empty()) {
    try {
      Profiles = policy::loadProfiles(ProfilesPath);
    } catch (const std::exception &E) {
      C.error = "smpart: SMPART_PROFILES: " + std::string(E.what()) + Suffix;
      return C;
    }
  } else {
    Profiles.gpu.num_sms = static_cast<int>(SmIds.size());
  }

  std::unique_ptr<trace::TraceWriter> Trace;
  if (!TracePath.empty()) {
    std::string Err;
    if (!smpart::detail::inputReplacedBy(TracePath, std::vector{ProfilesPath})
             .empty()) {
      C.error = "smpart: SMPART_TRACE=" + TracePath +
                " is the SMPART_PROFILES file; the trace would replace it" +
                Suffix;
      return C;
    }
    Trace = trace::TraceWriter::open(TracePath, &Err);
    if (!Trace) {
      C.error = "smpart: SMPART_TRACE: " + Err + Suffix;
      return C;
    }
  }

  // Everything is valid: activate.
  trace::TraceWriter *TraceRaw = Trace.get();
  if (Trace) {
    trace::setGlobal(std::move(Trace));
    C.trace = true;
  }
  if (Pol) {
    ControllerOptions O;
    O.trace = TraceRaw;
    O.epoch_us = EpochUs;
    if (Online) {
      policy::ProfileSet Copy = Profiles;
      Copy.gpu.num_sms = static_cast<int>(SmIds.size());
      O.online = online::makeOnlinePolicy(*Online, std::move(Copy), {});
    }
    C.controller = std::make_unique<Controller>(*Pol, std::move(Profiles),
                                                SmIds, std::move(O));
  }
  C.profile_out = ProfileOut;
  return C;
}

} // namespace smpart::controller
