#include "sim/engine/collective_steps.h"

#include <fmt/format.h>

#include <stdexcept>
#include <utility>

namespace mfabric::sim::engine {

using workload::TaskId;

fabric::NodeId BackendCircuits::circuit_peer(fabric::NodeId nic) const {
  return circuits_ == nullptr ? fabric::kNoNode : circuits_->circuit_peer(nic);
}

collective::CollectiveRequest CollectiveSteps::request(const workload::TaskGraph& graph, TaskId id,
                                                       const std::vector<fabric::NodeId>& gpu_nodes,
                                                       std::uint64_t flow_hash) const {
  const workload::Task& t = graph.task(id);
  collective::CollectiveRequest req;
  req.kind = t.collective;
  for (std::int32_t g : graph.group(t.group()))
    req.members.push_back(gpu_nodes[static_cast<std::size_t>(g)]);
  req.bytes = t.bytes();
  req.matrix = t.matrix() >= 0 ? &graph.matrix(t.matrix()) : nullptr;
  req.flow_hash = flow_hash;
  req.circuits = &circuits_;
  return req;
}

void CollectiveSteps::hold(TaskId id, collective::CollectiveRequest request) {
  held_.emplace(id, std::move(request));
}

collective::CollectiveRequest CollectiveSteps::release(TaskId id) {
  const auto it = held_.find(id);
  if (it == held_.end()) {
    throw std::logic_error(fmt::format("engine: task {} released but not held", id));
  }
  collective::CollectiveRequest request = std::move(it->second);
  held_.erase(it);
  return request;
}

}  // namespace mfabric::sim::engine
