// Seeded generator of complete, valid profile documents for the property
// and mutation tests.
#pragma once

#include <nlohmann/json.hpp>

#include <random>

namespace smpart::policy::test {

nlohmann::json randomProfileDocument(std::mt19937_64 &Rng, int MaxKernels = 12);

} // namespace smpart::policy::test
