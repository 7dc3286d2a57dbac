#include "sim/failure_injector.h"

#include "sim/mfabric_control.h"

namespace mfabric::sim {

FailureInjector::FailureInjector(std::vector<config::Failure> failures,
                                 const fabric::Topology& topology, FabricController* inner,
                                 MfabricControl* mfabric)
    : failures_(std::move(failures)),
      topology_(topology),
      inner_(inner),
      mfabric_(mfabric),
      failed_(topology.nodes().size(), 0),
      server_down_(static_cast<std::size_t>(topology.cluster().servers), false) {}

void FailureInjector::attach(EngineContext& engine) {
  engine_ = &engine;
  if (inner_ != nullptr) inner_->attach(engine);
  // Failures at start are in place before any traffic; the others at their times, after the
  // network and compute events of that time.
  for (const config::Failure& f : failures_) {
    if (f.time() == Time::zero()) {
      apply(f);
    } else {
      engine.at(f.time(), [this, f] { apply(f); });
    }
  }
}

bool FailureInjector::hold_collective(workload::TaskId id, collective::CollectiveRequest& r) {
  return inner_ != nullptr && inner_->hold_collective(id, r);
}

void FailureInjector::compute_started(workload::TaskId id) {
  if (inner_ != nullptr) inner_->compute_started(id);
}

void FailureInjector::collective_finished(workload::TaskId id) {
  if (inner_ != nullptr) inner_->collective_finished(id);
}

void FailureInjector::apply(const config::Failure& f) {
  ++applied_;
  if (f.kind == config::FailureKind::Server)
    server_down_[static_cast<std::size_t>(f.server)] = true;
  if (f.kind == config::FailureKind::Gpu) links_down(topology_.gpu(f.server, f.index));
  if (f.kind == config::FailureKind::Server) {
    for (int k = 0; k < topology_.cluster().gpus_per_server; ++k)
      links_down(topology_.gpu(f.server, k));
  }
  for (const fabric::NodeId nic : failed_nics(f, topology_))
    fail_nic(nic);
  // A server that has lost its last EPS NIC keeps a way out through a peer.
  if (mfabric_ != nullptr && f.kind != config::FailureKind::Server && cut_off_from_eps(f.server)) {
    std::vector<bool> can_relay;
    const fabric::Region& r = mfabric_->region_of_server(f.server);
    for (int s = r.first_server; s < r.first_server + r.servers; ++s)
      can_relay.push_back(!server_down_[static_cast<std::size_t>(s)] && !cut_off_from_eps(s));
    mfabric_->isolate(f.server, can_relay);
  }
  engine_->backend().reroute_down();
}

void FailureInjector::fail_nic(fabric::NodeId nic) {
  if (failed_[static_cast<std::size_t>(nic)] != 0) return;
  if (mfabric_ != nullptr && topology_.node(nic).role == fabric::NicRole::Ocs) {
    mfabric_->fail_port(nic);
  }
  links_down(nic);
}

void FailureInjector::links_down(fabric::NodeId node) {
  failed_[static_cast<std::size_t>(node)] = 1;
  net::Backend& net = engine_->backend();
  for (const fabric::LinkId l : topology_.links_of(node))
    net.set_link_rate(l, Rate::bits_per_second(0));
}

bool FailureInjector::cut_off_from_eps(int server) const {
  bool any = false;
  for (int j = 0; j < topology_.cluster().nics_per_server; ++j) {
    const fabric::NodeId nic = topology_.nic(server, j);
    if (topology_.node(nic).role != fabric::NicRole::Eps) continue;
    any = true;
    if (failed_[static_cast<std::size_t>(nic)] == 0) return false;
  }
  return any;
}

}  // namespace mfabric::sim
