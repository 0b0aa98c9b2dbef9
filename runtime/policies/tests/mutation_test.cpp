// Seeded mutation test of the loader and every policy: mutated documents
// may be rejected only with an InputError, and a document the loader
// accepts must give each policy a plan or an InputError -- never a crash or
// another exception. The longer campaign lives in profile_fuzz.cpp.
#include "random_profiles.hpp"
#include "test_support.hpp"

#include "smpart/policy/evaluator.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

using namespace smpart::policy;
using namespace smpart::policy::test;

namespace {

std::string readExample(const char *Name) {
  std::ifstream In(std::string(SMPART_POLICY_EXAMPLES) + "/" + Name);
  std::stringstream SS;
  SS << In.rdbuf();
  return SS.str();
}

// Replaces a random node of \p Doc by an awkward value.
void mutateTree(json &Doc, std::mt19937_64 &Rng) {
  static const json Awkward[] = {-1,
                                 0,
                                 1,
                                 -1e308,
                                 1e308,
                                 2.5,
                                 "x",
                                 nullptr,
                                 json::array(),
                                 json::object(),
                                 true,
                                 9223372036854775807LL,
                                 18446744073709551615ULL,
                                 1e-320};
  json *Node = &Doc;
  for (int Depth = 0; Depth < 6; ++Depth) {
    if (Node->is_object() && !Node->empty()) {
      auto It = Node->begin();
      std::advance(It, Rng() % Node->size());
      if (Rng() % 4 == 0) {
        if (Rng() % 3 == 0) {
          Node->erase(It);
          return;
        }
        *It = Awkward[Rng() % std::size(Awkward)];
        return;
      }
      Node = &*It;
    } else if (Node->is_array() && !Node->empty()) {
      std::size_t I = Rng() % Node->size();
      if (Rng() % 4 == 0) {
        if (Rng() % 3 == 0)
          Node->push_back((*Node)[I]); // duplicate: breaks monotone order
        else
          (*Node)[I] = Awkward[Rng() % std::size(Awkward)];
        return;
      }
      Node = &(*Node)[I];
    } else {
      *Node = Awkward[Rng() % std::size(Awkward)];
      return;
    }
  }
  *Node = Awkward[Rng() % std::size(Awkward)];
}

// Byte-level damage: flips, deletions, JSON-ish insertions.
void mutateText(std::string &Text, std::mt19937_64 &Rng) {
  static const char *Tokens[] = {
      "[",     "]",    "{",   "}", "\"", ",",    ":",    "-",
      "1e999", "null", "\\u", "0", "-0", "[[[[", "\xff", "\"kernels\""};
  int Edits = 1 + static_cast<int>(Rng() % 4);
  for (int E = 0; E < Edits && !Text.empty(); ++E) {
    std::size_t At = Rng() % Text.size();
    switch (Rng() % 3) {
    case 0:
      Text[At] = static_cast<char>(Rng() & 0xff);
      break;
    case 1:
      Text.erase(At, 1 + Rng() % 8);
      break;
    default:
      Text.insert(At, Tokens[Rng() % std::size(Tokens)]);
    }
  }
}

void exercise(const std::string &Text) {
  ProfileSet S;
  try {
    S = parseProfiles(Text, "mutant.json");
  } catch (const InputError &) {
    return;
  }
  for (const Policy *Pol : allPolicies()) {
    try {
      PolicyOptions O;
      O.explain = true;
      Plan P = Pol->decide(S, O);
      std::string Dumped = planToJson(P).dump();
      Plan Back = parsePlan(Dumped, "plan.json");
      try {
        evaluationToJson(evaluatePlan(Back, S, "plan.json")).dump();
      } catch (const InputError &) {
      }
    } catch (const InputError &) {
    }
  }
}

} // namespace

TEST(Mutation, SeededMutantsNeverCrash) {
  std::vector<std::string> Seeds = {readExample("compute_memory_pair.json"),
                                    readExample("memory_memory_pair.json"),
                                    readExample("compute_compute_pair.json"),
                                    readExample("hsm_training.json")};
  std::mt19937_64 Rng(7);
  for (int I = 0; I < 4; ++I)
    Seeds.push_back(randomProfileDocument(Rng, 6).dump());
  for (int Iter = 0; Iter < 6000; ++Iter) {
    const std::string &Seed = Seeds[Iter % Seeds.size()];
    std::string Text;
    if (Iter % 2 == 0) {
      json Doc = json::parse(Seed);
      for (int M = 0, N = 1 + static_cast<int>(Rng() % 3); M < N; ++M)
        mutateTree(Doc, Rng);
      Text = Doc.dump();
    } else {
      Text = Seed;
      mutateText(Text, Rng);
    }
    ASSERT_NO_FATAL_FAILURE(exercise(Text)) << Text;
  }
}
