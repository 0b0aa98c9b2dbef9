#include "opaque_messages.hpp"

#include "smpart/service.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>

namespace smpart::service::detail {

using nlohmann::json;

namespace {

/// A tenant's value as an error quotes it: at most 40 bytes.
std::string quote(const json &V) {
  std::string S = V.dump(-1, ' ', false, json::error_handler_t::replace);
  return S.size() > 40 ? S.substr(0, 37) + "..." : S;
}

std::string got(const json &J, const char *Key) {
  auto It = J.find(Key);
  return It == J.end() ? "missing" : "got " + quote(*It);
}

/// An optional unsigned field in [1, Max].
bool count(const std::string &Type, const json &J, const char *Key,
           unsigned Max, unsigned &Out, std::string &Why) {
  auto It = J.find(Key);
  if (It == J.end())
    return true;
  if (!It->is_number_unsigned() || It->get<unsigned long long>() < 1 ||
      It->get<unsigned long long>() > Max) {
    Why = Type + ": " + Key + ": expected an SM count (1 to " +
          std::to_string(Max) + "), " + got(J, Key);
    return false;
  }
  Out = It->get<unsigned>();
  return true;
}

} // namespace

bool isOpaqueType(const std::string &Type) {
  return std::find(std::begin(OpaqueTypes), std::end(OpaqueTypes), Type) !=
         std::end(OpaqueTypes);
}

bool parseOpaque(const std::string &Type, const json &J, OpaqueMessage &Out,
                 std::string &Why) {
  Out = OpaqueMessage{};
  Out.kind = Type == "opaque_declare" ? OpaqueMessage::Declare
             : Type == "opaque_hold"  ? OpaqueMessage::Hold
                                      : OpaqueMessage::Remove;
  auto Name = J.find("name");
  if (Name == J.end() || !Name->is_string() || Name->empty() ||
      Name->get<std::string>().size() > 128) {
    Why = Type + ": name: expected the partition's name (1 to 128 bytes), " +
          got(J, "name");
    return false;
  }
  Out.tenant.name = Name->get<std::string>();
  if (Out.kind == OpaqueMessage::Declare) {
    if (!count(Type, J, "min_sms", kMaxSms, Out.tenant.min_sms, Why) ||
        !count(Type, J, "granularity", kMaxSms, Out.tenant.granularity, Why))
      return false;
    if (auto W = J.find("weight"); W != J.end()) {
      if (!W->is_number() || !std::isfinite(W->get<double>()) ||
          W->get<double>() <= 0 || W->get<double>() > 1e6) {
        Why = Type + ": weight: expected a number above 0 (at most 1e6), " +
              got(J, "weight");
        return false;
      }
      Out.tenant.weight = W->get<double>();
    }
  }
  if (Out.kind == OpaqueMessage::Hold) {
    auto Ids = J.find("sm_ids");
    if (Ids == J.end() || !Ids->is_array()) {
      Why = Type + ": sm_ids: expected an array of SM ids, " + got(J, "sm_ids");
      return false;
    }
    for (std::size_t I = 0; I < Ids->size(); ++I) {
      const json &V = (*Ids)[I];
      const std::string Where = Type + ": sm_ids[" + std::to_string(I) + "]: ";
      if (!V.is_number_unsigned()) {
        Why = Where + "expected an SM id (0 to " + std::to_string(kMaxSms - 1) +
              "), got " + quote(V);
        return false;
      }
      const std::string Bad =
          smIdError(V.get<unsigned long long>(), Out.sm_ids);
      if (!Bad.empty()) {
        Why = Where + Bad;
        return false;
      }
      Out.sm_ids.push_back(V.get<unsigned>());
    }
  }
  return true;
}

} // namespace smpart::service::detail
