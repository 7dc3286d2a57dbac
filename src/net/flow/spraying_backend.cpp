#include "net/flow/spraying_backend.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.h"
#include "net/router.h"

namespace mfabric::net {

SprayingBackend::SprayingBackend(std::unique_ptr<Backend> inner, int paths)
    : inner_(std::move(inner)), paths_(paths) {
  if (paths < 1 || paths > kMaxSprayPaths) {
    throw Error("", "spray_paths", fmt::format("1 to {} routes, got {}", kMaxSprayPaths, paths));
  }
}

TransferId SprayingBackend::start(const net::Transfer& t, DoneCallback on_done) {
  check_transfer(t);
  const std::int64_t size = t.size.count();
  const int parts = static_cast<int>(std::clamp<std::int64_t>(size / kMinSprayPart, 1, paths_));
  std::int32_t slot;
  if (!free_pending_.empty()) {
    slot = free_pending_.back();
    free_pending_.pop_back();
  } else {
    slot = static_cast<std::int32_t>(pending_.size());
    pending_.emplace_back();
  }
  const TransferId id = next_id_++;
  pending_[static_cast<std::size_t>(slot)] = Pending{id, parts, size, std::move(on_done)};
  ++active_;
  ++totals_.started;
  totals_.bytes_sent += size;
  for (int i = 0; i < parts; ++i) {
    net::Transfer part = t;
    // Equal parts; the first ones take the remainder's bytes.
    part.size = Bytes(size / parts + (i < size % parts ? 1 : 0));
    part.flow_hash = spray_hash(t.flow_hash, static_cast<std::uint64_t>(i));
    const TransferId inner = inner_->start(part, [this, slot](TransferId part_id, Time at) {
      outer_of_inner_.erase(part_id);
      Pending& p = pending_[static_cast<std::size_t>(slot)];
      if (--p.parts_left > 0) return;
      DoneCallback done = std::move(p.on_done);
      const TransferId outer = p.id;
      ++totals_.delivered;
      totals_.bytes_delivered += p.size;
      --active_;
      free_pending_.push_back(slot);
      if (done) done(outer, at);
    });
    outer_of_inner_[inner] = id;
  }
  return id;
}

std::vector<StalledTransfer> SprayingBackend::stalled_transfers(std::size_t limit) const {
  std::vector<StalledTransfer> out = inner_stats().stalled_transfers(limit);
  for (StalledTransfer& s : out) {
    const auto it = outer_of_inner_.find(s.id);
    if (it != outer_of_inner_.end()) s.id = it->second;
  }
  return out;
}

TransferTotals SprayingBackend::totals() const {
  return totals_;
}

}  // namespace mfabric::net
