// The links a backend routes over: the topology's links (fixed) followed by circuit slots,
// optical circuits that appear and disappear during a run (docs/network.md, "Circuits").
//
// A circuit is a direct link between two NICs of different servers, both cabled to the same
// optical switching device: the OCS NICs of one mFabric region, or any two NICs on TopoOpt's
// patch panel. Each NIC holds at most one circuit at a time. Circuits live here, not in the
// Topology, which stays the fabric as built (and as costed: a circuit is not a cable; its OCS
// ports, NICs and transceivers already are). Their ids are topology links + slot, with
// slot < circuit_capacity() = half the NICs on optical devices, reused lowest first, so link ids
// stay bounded over any number of reconfigurations.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "fabric/topology.h"

namespace mfabric::net {

// A node's links: its topology links, then its circuit if it has one.
class LinkRange {
 public:
  class iterator {
   public:
    iterator(std::span<const fabric::LinkId> base, fabric::LinkId extra, std::size_t i)
        : base_(base), extra_(extra), i_(i) {}
    fabric::LinkId operator*() const { return i_ < base_.size() ? base_[i_] : extra_; }
    iterator& operator++() {
      ++i_;
      return *this;
    }
    bool operator!=(const iterator& o) const { return i_ != o.i_; }

   private:
    std::span<const fabric::LinkId> base_;
    fabric::LinkId extra_;
    std::size_t i_;
  };
  LinkRange(std::span<const fabric::LinkId> base, fabric::LinkId extra)
      : base_(base), extra_(extra) {}
  iterator begin() const { return {base_, extra_, 0}; }
  iterator end() const { return {base_, extra_, base_.size() + (extra_ >= 0 ? 1 : 0)}; }

 private:
  std::span<const fabric::LinkId> base_;
  fabric::LinkId extra_;
};

class LinkTable {
 public:
  // The topology must outlive the table.
  explicit LinkTable(const fabric::Topology& topology);

  const fabric::Topology& topology() const { return *t_; }
  // Topology links plus circuit slots (connected or not).
  std::size_t size() const { return t_->links().size() + slots_.size(); }
  const fabric::Link& link(fabric::LinkId l) const {
    const auto i = static_cast<std::size_t>(l);
    return i < t_->links().size() ? t_->links()[i] : slots_[i - t_->links().size()];
  }
  LinkRange links_of(fabric::NodeId v) const {
    return {t_->links_of(v), circuit_at_[static_cast<std::size_t>(v)]};
  }
  fabric::NodeId other_end(fabric::LinkId l, fabric::NodeId from) const {
    const fabric::Link& k = link(l);
    return k.a == from ? k.b : k.a;
  }

  // --- circuits ---
  std::size_t circuit_capacity() const { return slots_.size(); }
  bool is_circuit(fabric::LinkId l) const {
    return l >= 0 && static_cast<std::size_t>(l) >= t_->links().size() &&
           static_cast<std::size_t>(l) < size();
  }
  bool connected(fabric::LinkId l) const { return is_circuit(l) && link(l).a != fabric::kNoNode; }
  // The circuit at a NIC, or -1.
  fabric::LinkId circuit_at(fabric::NodeId nic) const {
    return circuit_at_[static_cast<std::size_t>(nic)];
  }
  std::size_t circuits() const { return connected_; }
  // Joins two NICs with a circuit at the NICs' link rate, latency the sum of their two cables
  // to the optical device (light crosses both fibres). Throws mfabric::Error unless both are
  // NICs on the same OCS region (or both on the patch panel), on different servers, and
  // neither holds a circuit.
  fabric::LinkId connect(fabric::NodeId a, fabric::NodeId b);
  // Removes a connected circuit; its slot is free for the next connect().
  void disconnect(fabric::LinkId circuit);

 private:
  // The NIC's cable to its optical device, or -1.
  fabric::LinkId optical_cable(fabric::NodeId nic) const;

  const fabric::Topology* t_;
  std::vector<fabric::Link> slots_;  // a == kNoNode: free
  std::vector<fabric::LinkId> circuit_at_;
  std::vector<std::size_t> free_;  // free slots, a min-heap
  std::size_t connected_ = 0;
};

}  // namespace mfabric::net
