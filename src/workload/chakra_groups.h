// Process groups of a Chakra trace: which ranks each pg_name names, and which traffic class its
// communication counts as (docs/chakra.md, "Process groups and membership" and "Traffic
// class"). Members come from mfabric's GlobalMetadata attributes, ASTRA-sim's communicator-group
// file and PyTorch's process-group metadata node. Internal to the Chakra reader.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "workload/task_graph.h"

namespace mfabric::workload::chakra {

// One entry of PyTorch's process-group metadata (torch.distributed's pg_config_info).
struct PytorchGroup {
  std::string pg_name;
  std::string pg_desc;
  std::vector<std::int32_t> ranks;  // global ranks; PyTorch lists none for an all-rank group
  std::string node;                 // the metadata node it came from, for messages
};

// Parses the inputs.values of a "## process_group:init ##" METADATA node of a trace of `ranks`
// ranks: a JSON list of {"pg_name", "pg_desc", "ranks", ...} objects, as PyTorch writes it, or
// wrapped in a list holding it as one string (Python's or JSON's quoting), as Chakra's converter
// writes it. Throws mfabric::Error(file, node, ...) on anything else.
std::vector<PytorchGroup> parse_pytorch_groups(const std::string& values, int ranks,
                                               const std::string& file, const std::string& node);

// Reads ASTRA-sim's communicator-group file: a JSON object {"0": [0, 1, 2, 3], "1": [4, 5]},
// group name -> global ranks of a trace of `ranks` ranks. Throws mfabric::Error(path, key, ...)
// on malformed JSON, a repeated key, a rank that is not an integer in 0..ranks-1, an empty group
// or a rank listed twice.
std::vector<std::pair<std::string, std::vector<std::int32_t>>> read_comm_groups(
    const std::string& path, int ranks);

// Checks a member list (ranks in 0..ranks-1, none twice, at least one) and narrows it; errors
// are mfabric::Error(source, field, ...).
std::vector<std::int32_t> checked_members(const std::vector<std::int64_t>& list, int ranks,
                                          const std::string& source, const std::string& field);

// The traffic class a group name or description says: TP, EP, DP, PP by whole tokens, or None.
Traffic classify(std::string_view name);

struct GroupDeclaration {
  enum class Kind : std::uint8_t { GlobalMetadata, CommGroupFile, PytorchMetadata };
  Kind kind = Kind::GlobalMetadata;
  std::vector<std::int32_t> members;
  std::string source;  // the file
  std::string field;   // where in it, for messages
};

class ProcessGroups {
 public:
  // Declarations come in decreasing precedence (GlobalMetadata, the communicator-group file,
  // PyTorch metadata); the first one of a name gives its member order. Two of the same kind must
  // list the same ranks in the same order, two of different kinds the same ranks; otherwise the
  // error names both.
  void declare(const std::string& pg, GroupDeclaration declaration);
  // A PyTorch pg_desc ("TENSOR_MODEL_PARALLEL_GROUP"), used when the name says no class.
  void describe(const std::string& pg, const std::string& description);

  const GroupDeclaration* find(const std::string& pg) const;
  // classify(pg), else classify(its description), else Other.
  Traffic traffic(const std::string& pg) const;

 private:
  std::map<std::string, GroupDeclaration> declared_;
  std::map<std::string, std::string> descriptions_;
};

}  // namespace mfabric::workload::chakra
