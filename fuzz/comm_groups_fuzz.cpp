// Communicator-group files (workload::chakra::read_comm_groups, docs/chakra.md: ASTRA-sim's
// {"0": [0, 1, 2, 3], ...}, read with `mfabric ... --comm-groups FILE` beside a Chakra trace),
// and the same text as the values of PyTorch's process-group metadata node
// (chakra::parse_pytorch_groups), the other JSON a trace's groups come from.
//
// Both take the trace's rank count. The input may give it on its first line, "ranks=N" (N a
// decimal from 1 to kMaxRanks); the rest is the file. Without that line the whole input is the
// file and the trace has kDefaultRanks ranks. The input's repeat markers are expanded first
// (fuzz_support.h), so "@@100000(k@@#@@)@@" style inputs give many groups or long rank lists.
// Groups that read must hold what the Chakra reader relies on: ranks in 0..N-1, none twice, at
// least one (PyTorch's all-rank groups list none).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fuzz_support.h"
#include "workload/chakra_groups.h"

namespace {

constexpr int kDefaultRanks = 16;
// Traces of tens of thousands of ranks exist (ASTRA-sim's scale-out studies); more would take a
// trace of as many files.
constexpr int kMaxRanks = 65536;
constexpr std::string_view kRanksKey = "ranks=";

// The rank count and the file's text.
std::pair<int, std::string_view> ranks_and_file(std::string_view text) {
  if (text.substr(0, kRanksKey.size()) != kRanksKey) return {kDefaultRanks, text};
  const std::size_t eol = text.find('\n');
  const std::string_view digits = text.substr(kRanksKey.size(), eol - kRanksKey.size());
  long n = 0;
  if (digits.empty() || digits.size() > 5) return {kDefaultRanks, text};
  for (const char c : digits) {
    if (c < '0' || c > '9') return {kDefaultRanks, text};
    n = n * 10 + (c - '0');
  }
  if (n < 1 || n > kMaxRanks) return {kDefaultRanks, text};
  return {static_cast<int>(n), eol == std::string_view::npos ? "" : text.substr(eol + 1)};
}

void check_members(const std::vector<std::int32_t>& members, int ranks, bool may_be_empty) {
  if (members.empty() && !may_be_empty) mfabric::fuzz::property_failed("a group of no ranks");
  // Sorted, not flags per rank: the check costs the group's size, not the trace's.
  std::vector<std::int32_t> sorted = members;
  std::sort(sorted.begin(), sorted.end());
  if (!sorted.empty() && (sorted.front() < 0 || sorted.back() >= ranks)) {
    mfabric::fuzz::property_failed("a rank outside 0.." + std::to_string(ranks - 1));
  }
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
    mfabric::fuzz::property_failed("a rank listed twice");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace mfabric;
  const std::optional<std::string> text = fuzz::expanded_text(data, size);
  if (!text) return -1;
  // Not a structured binding: clang 14 cannot capture one in the lambdas below.
  const std::pair<int, std::string_view> split = ranks_and_file(*text);
  const int ranks = split.first;
  const std::string_view file = split.second;
  const std::string path = fuzz::write_scratch("comm_groups.json", file);
  fuzz::expect_only_mfabric_errors([&] {
    for (const auto& [name, members] : workload::chakra::read_comm_groups(path, ranks))
      check_members(members, ranks, false);
  });
  fuzz::expect_only_mfabric_errors([&] {
    for (const workload::chakra::PytorchGroup& g :
         workload::chakra::parse_pytorch_groups(std::string(file), ranks, "trace.0.et", "node 1"))
      check_members(g.ranks, ranks, true);
  });
  return 0;
}
