// Levenshtein distance, for "did you mean" suggestions: the profile
// loader's unknown fields and the command-line tools' unknown options.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

namespace smpart::detail {

inline unsigned editDistance(const std::string &A, const std::string &B) {
  std::vector<unsigned> Row(B.size() + 1);
  for (std::size_t J = 0; J <= B.size(); ++J)
    Row[J] = static_cast<unsigned>(J);
  for (std::size_t I = 1; I <= A.size(); ++I) {
    unsigned Diagonal = Row[0];
    Row[0] = static_cast<unsigned>(I);
    for (std::size_t J = 1; J <= B.size(); ++J) {
      unsigned Above = Row[J];
      Row[J] = std::min({Row[J] + 1, Row[J - 1] + 1,
                         Diagonal + (A[I - 1] == B[J - 1] ? 0u : 1u)});
      Diagonal = Above;
    }
  }
  return Row[B.size()];
}

} // namespace smpart::detail
