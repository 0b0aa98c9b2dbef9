#include <cstdio>
namespace a {
void run(int, const float *, float *);
}
namespace b {
void run(int, const float *, float *);
}
int main(int argc, char **) {
  // Built, not run, in the tests (no GPU there).
  if (argc > 1) {
    a::run(0, nullptr, nullptr);
    b::run(0, nullptr, nullptr);
  }
  std::puts("consumer");
  return 0;
}
