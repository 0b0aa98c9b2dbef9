// smpart_corun_sim POLICY PROFILES TRACE_OUT: a simulated co-run under the
// controller, written as a trace. Three launches on a 132-SM GPU (real ids
// with gaps): sgemm at 0 ms, stream_triad at 2 ms, an unprofiled kernel at
// 5 ms; each runs SMs x CTAs/SM blocks per 0.1 ms step, notifies its last
// block and departs. The trace's clock is the simulated time, so
// `smpart-trace plot` shows the repartitioning as it would look on a GPU.
// Used by CTest (trace format + plot) and as a demo; not a benchmark.
#include "../tests/fake_kernel.hpp"

#include "smpart/controller.hpp"
#include "smpart/policy/profile_loader.hpp"
#include "smpart/trace.hpp"

#include <cstdio>
#include <exception>

using namespace smpart;

int main(int Argc, char **Argv) {
  if (Argc != 4) {
    std::fprintf(stderr, "usage: %s POLICY PROFILES.json TRACE.json\n",
                 Argv[0]);
    return 2;
  }
  const policy::Policy *P = policy::findPolicy(Argv[1]);
  if (!P) {
    std::fprintf(stderr, "smpart_corun_sim: unknown policy %s\n", Argv[1]);
    return 2;
  }
  policy::ProfileSet Profiles;
  try {
    Profiles = policy::loadProfiles(Argv[2]);
  } catch (const std::exception &E) {
    std::fprintf(stderr, "smpart_corun_sim: %s\n", E.what());
    return 2;
  }
  std::string Err;
  auto Trace = trace::TraceWriter::open(Argv[3], &Err);
  if (!Trace) {
    std::fprintf(stderr, "smpart_corun_sim: %s\n", Err.c_str());
    return 2;
  }
  double NowUs = 0;
  Trace->setClockForTesting([&] { return NowUs; });
  Trace->setFlushIntervalMs(-1);

  std::vector<unsigned> Ids;
  for (unsigned I = 0; I < 132; ++I)
    Ids.push_back(I + I / 11); // 12 gaps, like disabled TPCs
  ControllerOptions O;
  O.trace = Trace.get();
  Controller C(*P, Profiles, Ids, O);

  struct Launch {
    double at_ms;
    const char *name;
    unsigned long long blocks;
  };
  const Launch Plan[] = {{0.0, "sgemm", 400000},
                         {2.0, "stream_triad", 150000},
                         {5.0, "unprofiled_kernel", 60000}};
  std::vector<std::shared_ptr<testing::FakeKernel>> Ks;
  std::vector<int> State; // 0 running, 1 last block taken, 2 departed
  std::size_t Next = 0;
  for (int Step = 0; Step < 1000000; ++Step) {
    NowUs = Step * 100.0;
    while (Next < std::size(Plan) && Plan[Next].at_ms * 1000 <= NowUs) {
      Ks.push_back(std::make_shared<testing::FakeKernel>(
          Next + 1, Plan[Next].name, Plan[Next].blocks, 8, Ids, nullptr));
      State.push_back(0);
      C.onArrival(Ks.back());
      ++Next;
    }
    bool Running = Next < std::size(Plan);
    for (std::size_t I = 0; I < Ks.size(); ++I) {
      auto &K = *Ks[I];
      if (State[I] == 2)
        continue;
      Running = true;
      if (State[I] == 1) { // the last round of blocks drains in one step
        K.P.done = K.P.total;
        State[I] = 2;
        C.onDeparture(K.Id);
        continue;
      }
      K.advance();
      if (K.P.taken >= K.P.total) {
        K.P.done = K.P.taken - std::min<unsigned long long>(K.P.taken, 100);
        State[I] = 1;
        C.onLastBlockTaken(K.Id);
      }
    }
    if (!Running)
      break;
  }
  if (!Trace->flush(&Err)) {
    std::fprintf(stderr, "smpart_corun_sim: %s\n", Err.c_str());
    return 1;
  }
  std::printf(
      "smpart_corun_sim: %s, %llu decisions, %.1f ms simulated, trace %s\n",
      Argv[1], C.decisionCount(), NowUs / 1000.0, Argv[3]);
  return 0;
}
