#include "nvcc/NvccDialect.h"

#include <gtest/gtest.h>

namespace smpart {
namespace {

TEST(NvccDialect, SpacedChevronsKeepTheirLength) {
  const std::string In = "  k << <g, b >> >(x);\n  m<<<1, 2>>>(y);\n";
  const std::string Out = NvccDialect::forClang(In);
  EXPECT_EQ(Out.size(), In.size());
  EXPECT_EQ(Out, "  k  <<<g, b >>> (x);\n  m<<<1, 2>>>(y);\n");
}

TEST(NvccDialect, TemplatesAndShiftsAreLeftAlone) {
  const std::string In = "A<B<C<int>> > a; int s = x << 2; t >> 1;\n";
  EXPECT_EQ(NvccDialect::forClang(In), In);
}

TEST(NvccDialect, AsmOperandsWithoutACommaGetOne) {
  const std::string In =
      "asm volatile(\"st.u8 [%1], %0;\" ::\"r\"(f(v)) \"l\"(p) : \"memory\");\n"
      "asm(\"add.u32 %0, %1, %2;\" : \"=r\"(a) : \"r\"(b), \"r\"(c));\n";
  const std::string Out = NvccDialect::forClang(In);
  EXPECT_EQ(Out.size(), In.size());
  EXPECT_EQ(
      Out,
      "asm volatile(\"st.u8 [%1], %0;\" ::\"r\"(f(v)),\"l\"(p) : \"memory\");\n"
      "asm(\"add.u32 %0, %1, %2;\" : \"=r\"(a) : \"r\"(b), \"r\"(c));\n");
}

TEST(NvccDialect, SinglePercentSpecialRegistersAreDoubled) {
  const std::string In =
      "asm volatile(\"mov.u64 %0, %globaltimer;\" : \"=l\"(v));\n"
      "asm(\"mov.u32 %0,%smid;\" : \"=r\"(s));\n"
      "asm(\"add.u32 %0, %1, %2;\" : \"=r\"(a) : \"r\"(b), \"r\"(c));\n"
      "asm(\"mov.u32 %0,%laneid;\" : \"=r\"(l));\n";
  const std::string Out = NvccDialect::forClang(In);
  EXPECT_EQ(Out.size(), In.size());
  EXPECT_NE(Out.find("\"mov.u64 %0,%%globaltimer;\""), std::string::npos)
      << Out;
  EXPECT_NE(Out.find("\"mov.u32%0,%%smid;\""), std::string::npos) << Out;
  EXPECT_NE(Out.find("\"add.u32 %0, %1, %2;\""), std::string::npos) << Out;
  // Every line keeps its length, so every later column is unchanged.
  size_t A = 0, B = 0;
  while (A != std::string::npos) {
    const size_t NA = In.find('\n', A), NB = Out.find('\n', B);
    EXPECT_EQ(NA - A, NB - B);
    A = NA == std::string::npos ? NA : NA + 1;
    B = NB == std::string::npos ? NB : NB + 1;
  }
}

} // namespace
} // namespace smpart
