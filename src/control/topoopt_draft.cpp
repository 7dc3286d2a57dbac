#include <fmt/format.h>

#include <algorithm>

#include "control/topoopt_steps.h"
#include "core/error.h"

namespace mfabric::control::detail {

PanelDraft::PanelDraft(int servers, int degree)
    : degree_(degree), free_(static_cast<std::size_t>(servers), degree) {}

std::uint64_t PanelDraft::key(int a, int b) {
  if (a > b) std::swap(a, b);
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(a)) << 32) |
         static_cast<std::uint32_t>(b);
}

int PanelDraft::links_between(int a, int b) const {
  const auto it = between_.find(key(a, b));
  return it == between_.end() ? 0 : it->second;
}

void PanelDraft::add(const DraftLink& link) {
  if (link.a == link.b || link.a < 0 || link.b < 0 || link.a >= servers() || link.b >= servers() ||
      free(link.a) < 1 || free(link.b) < 1) {
    // A planner bug, not bad input: the steps only add links between servers with free NICs.
    throw Error(
        "", "topoopt",
        fmt::format("internal: cannot add a link between servers {} and {}", link.a, link.b));
  }
  --free_[static_cast<std::size_t>(link.a)];
  --free_[static_cast<std::size_t>(link.b)];
  ++between_[key(link.a, link.b)];
  links_.push_back(link);
}

void PanelDraft::remove(std::size_t index) {
  const DraftLink link = links_.at(index);
  ++free_[static_cast<std::size_t>(link.a)];
  ++free_[static_cast<std::size_t>(link.b)];
  if (--between_[key(link.a, link.b)] == 0) between_.erase(key(link.a, link.b));
  links_.erase(links_.begin() + static_cast<std::ptrdiff_t>(index));
}

}  // namespace mfabric::control::detail
