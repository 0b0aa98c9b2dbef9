// The mixes in runtime/simulator/mixes, named once for every simulator test.
#pragma once

namespace smpart::sim::testing {

inline const char *const AllMixes[] = {"mc_sgemm_stream",
                                       "mm_stream_lbm",
                                       "cc_sgemm_conv",
                                       "mc_kmeans_stream",
                                       "three_sgemm_stream_spmv",
                                       "four_sgemm_conv_stream_lbm",
                                       "arrival_sgemm_stream",
                                       "arrival3_lbm_sgemm_histo",
                                       "demo"};

} // namespace smpart::sim::testing
