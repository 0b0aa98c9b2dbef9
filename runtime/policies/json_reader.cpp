#include "json_reader.hpp"

#include "smpart/detail/edit_distance.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

namespace smpart::policy::detail {

namespace {
std::string describeNumber(double Min, double Max, const char *What) {
  std::ostringstream OS;
  OS << "expected " << What;
  bool HasMin = std::isfinite(Min), HasMax = std::isfinite(Max);
  if (HasMin && HasMax)
    OS << " in [" << Min << ", " << Max << "]";
  else if (HasMin)
    OS << " >= " << Min;
  else if (HasMax)
    OS << " <= " << Max;
  return OS.str();
}

const char *typeName(const nlohmann::json &V) { return V.type_name(); }

} // namespace

void JsonNode::checkMembers(std::initializer_list<const char *> Known,
                            std::vector<std::string> &Warnings) const {
  requireObject();
  for (auto It = Value->begin(); It != Value->end(); ++It) {
    const std::string &Key = It.key();
    if (std::any_of(Known.begin(), Known.end(),
                    [&](const char *K) { return Key == K; }))
      continue;
    std::string Closest;
    unsigned Best = 3; // a typo is at most two edits away
    for (const char *K : Known)
      if (unsigned D = smpart::detail::editDistance(Key, K); D < Best) {
        Best = D;
        Closest = K;
      }
    Warnings.push_back(
        File + ": " + (Path.empty() ? Key : Path + "." + Key) +
        ": unknown field; ignored" +
        (Closest.empty() ? "" : " (did you mean '" + Closest + "'?)"));
  }
}

void JsonNode::requireObject() const {
  if (!Value->is_object())
    fail(std::string("expected an object, got ") + typeName(*Value));
}

JsonNode JsonNode::member(const std::string &Key) const {
  requireObject();
  auto It = Value->find(Key);
  std::string Child = Path.empty() ? Key : Path + "." + Key;
  if (It == Value->end())
    throw InputError(File, Child, "missing required field");
  return JsonNode(*It, File, Child);
}

std::optional<JsonNode> JsonNode::optionalMember(const std::string &Key) const {
  requireObject();
  auto It = Value->find(Key);
  if (It == Value->end() || It->is_null())
    return std::nullopt;
  return JsonNode(*It, File, Path.empty() ? Key : Path + "." + Key);
}

std::size_t JsonNode::arraySize() const {
  if (!Value->is_array())
    fail(std::string("expected an array, got ") + typeName(*Value));
  return Value->size();
}

JsonNode JsonNode::element(std::size_t Index) const {
  arraySize();
  return JsonNode((*Value)[Index], File,
                  Path + "[" + std::to_string(Index) + "]");
}

std::string JsonNode::asString() const {
  if (!Value->is_string())
    fail(std::string("expected a string, got ") + typeName(*Value));
  return Value->get<std::string>();
}

long long JsonNode::asInteger(long long Min, long long Max,
                              const char *What) const {
  std::ostringstream Expect;
  Expect << "expected " << What << " in [" << Min << ", " << Max << "]";
  long long Result = 0;
  if (Value->is_number_unsigned()) {
    auto U = Value->get<unsigned long long>();
    if (U > static_cast<unsigned long long>(Max))
      fail(Expect.str());
    Result = static_cast<long long>(U);
  } else if (Value->is_number_integer()) {
    Result = Value->get<long long>();
  } else if (Value->is_number_float()) {
    double D = Value->get<double>();
    if (!std::isfinite(D) || D != std::floor(D) ||
        D < static_cast<double>(Min) || D > static_cast<double>(Max))
      fail(Expect.str());
    Result = static_cast<long long>(D);
  } else {
    fail(Expect.str() + ", got " + typeName(*Value));
  }
  if (Result < Min || Result > Max)
    fail(Expect.str());
  return Result;
}

double JsonNode::asNumber(double Min, double Max, const char *What) const {
  if (!Value->is_number())
    fail(describeNumber(Min, Max, What) + ", got " + typeName(*Value));
  double D = Value->get<double>();
  if (!std::isfinite(D) || D < Min || D > Max)
    fail(describeNumber(Min, Max, What));
  return D;
}

double JsonNode::asPositive(double Max, const char *What) const {
  std::ostringstream Expect;
  Expect << "expected " << What;
  if (std::isfinite(Max))
    Expect << " in (0, " << Max << "]";
  else
    Expect << " > 0";
  if (!Value->is_number())
    fail(Expect.str() + ", got " + typeName(*Value));
  double D = Value->get<double>();
  if (!std::isfinite(D) || !(D > 0) || D > Max)
    fail(Expect.str());
  return D;
}

nlohmann::json parseJsonDocument(const std::string &Text,
                                 const std::string &File, unsigned MaxDepth) {
  // The DOM is built iteratively, but deep documents still cost stack in
  // serialisation and comparisons; refuse them up front. Brackets inside
  // strings do not count.
  unsigned Depth = 0;
  bool InString = false, Escaped = false;
  for (char C : Text) {
    if (InString) {
      if (Escaped)
        Escaped = false;
      else if (C == '\\')
        Escaped = true;
      else if (C == '"')
        InString = false;
      continue;
    }
    if (C == '"')
      InString = true;
    else if (C == '[' || C == '{') {
      if (++Depth > MaxDepth)
        throw InputError(File, "(root)",
                         "expected JSON nested at most " +
                             std::to_string(MaxDepth) + " levels deep");
    } else if ((C == ']' || C == '}') && Depth > 0)
      --Depth;
  }
  // A key given twice in one object would silently take the last value
  // ("num_sms": 132, "num_sms": 4): refuse it, naming its JSON path.
  struct Frame {
    bool Array = false;
    std::size_t Index = 0;
    std::string Key;
    std::set<std::string> Keys;
  };
  std::vector<Frame> Open;
  auto pathTo = [&](const std::string &Key) {
    std::string Path;
    for (std::size_t I = 0; I + 1 < Open.size(); ++I)
      Path += Open[I].Array ? "[" + std::to_string(Open[I].Index) + "]"
                            : (Path.empty() ? "" : ".") + Open[I].Key;
    return Path + (Path.empty() ? "" : ".") + Key;
  };
  using Event = nlohmann::json::parse_event_t;
  auto noDuplicateKeys = [&](int, Event E, nlohmann::json &Parsed) {
    switch (E) {
    case Event::object_start:
    case Event::array_start:
      Open.push_back({E == Event::array_start, 0, "", {}});
      break;
    case Event::key:
      Open.back().Key = Parsed.get<std::string>();
      if (!Open.back().Keys.insert(Open.back().Key).second)
        throw InputError(File, pathTo(Open.back().Key),
                         "key given twice in one object");
      break;
    case Event::object_end:
    case Event::array_end:
      Open.pop_back();
      [[fallthrough]];
    case Event::value:
      if (!Open.empty() && Open.back().Array)
        ++Open.back().Index;
      break;
    }
    return true;
  };
  try {
    return nlohmann::json::parse(Text, noDuplicateKeys);
  } catch (const nlohmann::json::parse_error &E) {
    // Turn the byte offset into line:column for the user.
    std::size_t Line = 1, Col = 1;
    std::size_t End =
        std::min<std::size_t>(E.byte ? E.byte - 1 : 0, Text.size());
    for (std::size_t I = 0; I < End; ++I) {
      if (Text[I] == '\n') {
        ++Line;
        Col = 1;
      } else {
        ++Col;
      }
    }
    std::string Msg = E.what();
    // nlohmann prefixes "[json.exception.parse_error.101] parse error at
    // line 1, column 2: "; keep only the explanation.
    auto Colon = Msg.find(": ");
    if (Colon != std::string::npos)
      Msg = Msg.substr(Colon + 2);
    throw InputError(File, "(root)",
                     "malformed JSON at line " + std::to_string(Line) +
                         ", column " + std::to_string(Col) + ": " + Msg);
  } catch (const nlohmann::json::exception &E) {
    // Not a parse_error: e.g. out_of_range.406 for a number literal that
    // overflows a double ("1e999"). The parser reports no position.
    std::string Msg = E.what();
    auto Close = Msg.find("] ");
    if (Close != std::string::npos)
      Msg = Msg.substr(Close + 2);
    throw InputError(File, "(root)", "malformed JSON: " + Msg);
  }
}

} // namespace smpart::policy::detail
