#include "smpart/policy/policy.hpp"
#include <cstdio>
int main() {
  std::printf("%zu policies\n", smpart::policy::allPolicies().size());
  return 0;
}
