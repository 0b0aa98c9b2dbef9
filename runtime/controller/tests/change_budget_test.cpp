// The online policies' hysteresis bound (online/change_budget.hpp).
#include "change_budget.hpp"

#include <gtest/gtest.h>

using smpart::online::ChangeBudget;

namespace {

TEST(ChangeBudget, AtMostMaxChangesWithinTheWindow) {
  ChangeBudget B(/*Window=*/10, /*MaxChanges=*/2);
  EXPECT_TRUE(B.mayChange(7, 0)); // never changed
  B.record(7, 3);
  EXPECT_TRUE(B.mayChange(7, 4));
  B.record(7, 5);
  EXPECT_EQ(B.recent(7, 6), 2u);
  EXPECT_FALSE(B.mayChange(7, 6));
  EXPECT_FALSE(B.mayChange(7, 12));
  // Epoch 3 leaves the window ending at 13.
  EXPECT_EQ(B.recent(7, 13), 1u);
  EXPECT_TRUE(B.mayChange(7, 13));
  EXPECT_TRUE(B.mayChange(8, 6)); // per kernel
}

TEST(ChangeBudget, ForgetsKernelsThatLeft) {
  ChangeBudget B(10, 1);
  B.record(1, 0);
  B.record(2, 0);
  B.record(3, 0);
  B.keepOnly({2});
  EXPECT_TRUE(B.mayChange(1, 1));
  EXPECT_FALSE(B.mayChange(2, 1));
  EXPECT_TRUE(B.mayChange(3, 1));
  B.forget(2);
  EXPECT_TRUE(B.mayChange(2, 1));
}

TEST(ChangeBudget, KeepsOnlyWhatOneWindowCanHold) {
  ChangeBudget B(100, 2);
  for (unsigned long long E = 0; E < 10; ++E)
    B.record(4, E);
  EXPECT_EQ(B.recent(4, 10), 3u);
}

} // namespace
