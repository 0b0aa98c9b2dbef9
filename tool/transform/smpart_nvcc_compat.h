// smpart_nvcc_compat.h: pre-included by smpart-transform in both parses
// (never in the rewritten output) so that clang-22 accepts what nvcc
// accepts. Each block names the nvcc dialect feature it stands in for and
// has a lit test under lit_tests/dialect/. Disable with --nvcc-compat=none.
#ifndef SMPART_NVCC_COMPAT_H
#define SMPART_NVCC_COMPAT_H
#endif
