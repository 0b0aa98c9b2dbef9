// What every GPU test file uses: checks that name the failing expression,
// and a watchdog named after the running test. GoogleTest only (the GPU
// benchmarks use bounded_wait.hpp without it).
#pragma once

#include "bounded_wait.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#define CHECK_CUDA(expr) ASSERT_EQ((expr), cudaSuccess) << #expr
#define CHECK_OK(expr)                                                         \
  do {                                                                         \
    smpart::Status st_ = (expr);                                               \
    ASSERT_TRUE(st_.ok()) << #expr << ": " << st_.message();                   \
  } while (0)

namespace smpart_test {

/// Ends a hung test with its name after 35 s: below ctest's 45 s, so the
/// report says which test hung rather than that the binary timed out.
inline std::unique_ptr<Watchdog> watchCurrentTest() {
  const ::testing::TestInfo *t =
      ::testing::UnitTest::GetInstance()->current_test_info();
  return std::make_unique<Watchdog>(
      std::string(t->test_suite_name()) + "." + t->name(), 35);
}

} // namespace smpart_test
