// smpart::plannerFor: the plan of an smpart::Controller as a partition's
// OpaquePlanner (Controller::addOpaque, removeOpaque, opaqueTarget,
// holdOpaque). The calls name no controller type, so this file builds
// against a controller without opaque planning too; plannerFor() then
// returns null and partitions take their share from their options.
#include "smpart/controller.hpp"
#include "smpart/partition.hpp"

#include <type_traits>
#include <utility>

namespace smpart {
namespace {

template <class C, class = void> struct PlansOpaque : std::false_type {};
template <class C>
struct PlansOpaque<C, std::void_t<decltype(std::declval<const C &>()
                                               .opaqueTarget(std::string()))>>
    : std::true_type {};

template <class C> class ControllerPlanner : public OpaquePlanner {
public:
  explicit ControllerPlanner(std::shared_ptr<C> Ctl) : Ctl(std::move(Ctl)) {}
  void add(const std::string &Name, unsigned MinSms, unsigned Granularity,
           double Weight) override {
    Ctl->addOpaque({Name, MinSms, Granularity, Weight});
  }
  void remove(const std::string &Name) override { Ctl->removeOpaque(Name); }
  unsigned target(const std::string &Name) override {
    return Ctl->opaqueTarget(Name);
  }
  bool hold(const std::string &Name,
            const std::vector<unsigned> &SmIds) override {
    return Ctl->holdOpaque(Name, SmIds);
  }

private:
  std::shared_ptr<C> Ctl;
};

template <class C>
std::shared_ptr<OpaquePlanner> makePlanner(std::shared_ptr<C> Ctl) {
  if constexpr (PlansOpaque<C>::value)
    return std::make_shared<ControllerPlanner<C>>(std::move(Ctl));
  else
    return nullptr;
}

} // namespace

std::shared_ptr<OpaquePlanner> plannerFor(std::shared_ptr<Controller> C) {
  if (!C)
    return nullptr;
  return makePlanner(std::move(C));
}

} // namespace smpart
