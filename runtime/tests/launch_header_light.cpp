// Compiled, not run (test runtime_launch_header_is_light): every file
// smpart-transform rewrites includes smpart/launch.hpp, and nvcc parses it
// three times per file, so it must not pull in the standard headers that
// the full host API needs (about 2 s of build time per rewritten file;
// runtime/README.md).
#include "smpart/launch.hpp"

#if defined(_GLIBCXX_FUNCTIONAL) || defined(_LIBCPP_FUNCTIONAL)
#error "smpart/launch.hpp includes <functional>"
#endif
#if defined(_GLIBCXX_MEMORY) || defined(_LIBCPP_MEMORY)
#error "smpart/launch.hpp includes <memory>"
#endif
#if defined(_GLIBCXX_STRING) || defined(_LIBCPP_STRING)
#error "smpart/launch.hpp includes <string>"
#endif

// What a rewritten launch writes, type-checked: a closure that is only
// movable is accepted (the runtime owns it).
struct MoveOnlyClosure {
  MoveOnlyClosure() = default;
  MoveOnlyClosure(MoveOnlyClosure &&) = default;
  MoveOnlyClosure(const MoveOnlyClosure &) = delete;
  void operator()(const smpart::LaunchParams &) const {}
};

void launchesOnce() {
  smpart::launchRewritten({"k", nullptr}, dim3(1), dim3(32), 0, nullptr,
                          MoveOnlyClosure());
}
