// The receiver's record of which packets of a flow have arrived: the cumulative point and, only
// once packets arrive out of order, a bitmap of the ones beyond it. Shared by the transports
// that accept out-of-order data (DCTCP, IRN).
#pragma once

#include <cstdint>
#include <vector>

namespace mfabric::net::packet {

class ReceiveWindow {
 public:
  void reset(std::int32_t packets) {
    packets_ = packets;
    expected_ = 0;
    bits_.clear();
  }
  // Records an arrival; false for a duplicate.
  bool add(std::int32_t seq) {
    if (seq < expected_ || has(seq)) return false;
    if (seq != expected_) {
      if (bits_.empty()) bits_.assign((static_cast<std::size_t>(packets_) + 63) / 64, 0);
      bits_[static_cast<std::size_t>(seq) / 64] |= std::uint64_t{1} << (seq % 64);
      return true;
    }
    ++expected_;
    while (expected_ < packets_ && has(expected_))
      ++expected_;
    return true;
  }
  bool has(std::int32_t seq) const {
    if (seq < expected_) return true;
    if (bits_.empty()) return false;
    return (bits_[static_cast<std::size_t>(seq) / 64] >> (seq % 64)) & 1U;
  }
  // Every packet before this one has arrived.
  std::int32_t cumulative() const { return expected_; }
  bool complete() const { return expected_ == packets_; }
  void release() { std::vector<std::uint64_t>().swap(bits_); }

 private:
  std::int32_t packets_ = 0;
  std::int32_t expected_ = 0;
  std::vector<std::uint64_t> bits_;
};

}  // namespace mfabric::net::packet
