// The hysteresis bound of the online policies (controller README): once a
// kernel set has converged, each kernel's knobs may change at most
// max_changes times within any `window` epochs, so that a noisy
// measurement cannot make a policy oscillate between two configurations.
#pragma once

#include <algorithm>
#include <deque>
#include <iterator>
#include <map>
#include <vector>

namespace smpart::online {

class ChangeBudget {
public:
  ChangeBudget(unsigned Window, unsigned MaxChanges)
      : Window(Window), MaxChanges(MaxChanges) {}

  /// Notes that kernel \p Id's knobs changed at epoch \p Epoch.
  void record(unsigned long long Id, unsigned long long Epoch) {
    std::deque<unsigned long long> &C = Changes[Id];
    C.push_back(Epoch);
    // Only the last max_changes + 1 can fall within one window.
    while (C.size() > MaxChanges + 1)
      C.pop_front();
  }
  /// Changes of kernel \p Id within the window that ends at \p Epoch.
  unsigned recent(unsigned long long Id, unsigned long long Epoch) const {
    auto It = Changes.find(Id);
    if (It == Changes.end())
      return 0;
    unsigned N = 0;
    for (unsigned long long E : It->second)
      N += E + Window > Epoch;
    return N;
  }
  /// May kernel \p Id's knobs change at epoch \p Epoch? A kernel never
  /// changed always may.
  bool mayChange(unsigned long long Id, unsigned long long Epoch) const {
    return !Changes.count(Id) || recent(Id, Epoch) < MaxChanges;
  }
  void forget(unsigned long long Id) { Changes.erase(Id); }
  /// Forgets every kernel not in \p Ids (those that left the report).
  void keepOnly(const std::vector<unsigned long long> &Ids) {
    for (auto It = Changes.begin(); It != Changes.end();)
      It = std::find(Ids.begin(), Ids.end(), It->first) == Ids.end()
               ? Changes.erase(It)
               : std::next(It);
  }

private:
  unsigned Window;
  unsigned MaxChanges;
  /// Epoch indices at which each kernel's knobs were changed.
  std::map<unsigned long long, std::deque<unsigned long long>> Changes;
};

} // namespace smpart::online
