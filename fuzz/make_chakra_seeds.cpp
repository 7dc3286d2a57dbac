// Writes the seed inputs of the chakra and chakra_gzip harnesses: small valid traces (compute
// chains, all-reduce, send/receive, all-to-all-v with a declared group, named groups, rooted
// collectives), each rank's file framed as Chakra's writers frame it and the ranks joined by the
// harness's separator. Usage: mfabric_fuzz_chakra_seeds PLAIN_DIR GZIP_DIR
//   PLAIN_DIR gets every trace as plain protobuf and a copy with gzip-compressed rank files;
//   GZIP_DIR gets the plain traces only (that harness compresses each rank itself).
#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <vector>

#include "workload/chakra_writer.h"

namespace {

constexpr const char* kRankSeparator = "@@rank@@";  // as in chakra_fuzz.cpp

using namespace mfabric::workload::chakra_testing;

std::string gzip(const std::string& in) {
  std::string out;
  if (!gzip_member(in, Z_BEST_COMPRESSION, out)) {
    std::fprintf(stderr, "mfabric_fuzz_chakra_seeds: zlib failed\n");
    std::exit(1);
  }
  return out;
}

using Trace = std::vector<std::string>;  // one encoded file per rank

Trace compute_chain() {
  return {encode({comp(1, 10), comp(2, 20, {1}), comp(3, 5, {1, 2})})};
}

Trace all_reduce_and_send_recv() {
  Trace t;
  for (int r = 0; r < 2; ++r) {
    pb::Node flops = make(2, pb::COMP_NODE, {1});
    add_int(flops, "num_ops", 1'000'000'000'000);
    pb::Node peer = r == 0 ? send(4, 1, 4096, 7, {3}) : recv(4, 0, 4096, 7, {3});
    pb::Node tail = comp(5, 5);
    tail.add_ctrl_deps(4);
    t.push_back(encode({comp(1, 10 + 10 * static_cast<std::uint64_t>(r)), flops,
                        coll(3, pb::ALL_REDUCE, 1 << 20, "dp", {2}), peer, tail}));
  }
  return t;
}

Trace all_to_all_v() {
  pb::GlobalMetadata meta;
  meta.set_version("0.0.4");
  auto* group = meta.add_attr();
  group->set_name("pg_ranks:ep_group");
  for (std::int64_t r : {2, 0, 3, 1})
    group->mutable_int64_list()->add_values(r);
  Trace t;
  for (int r = 0; r < 4; ++r) {
    pb::Node a2a = coll(2, pb::ALL_TO_ALL, -1, "ep_group", {1});
    auto* a = a2a.add_attr();
    a->set_name("send_bytes_per_rank");
    for (std::int64_t k = 1; k <= 4; ++k)
      a->mutable_int64_list()->add_values(4 * r + k);
    add_int(a2a, "comm_size", 100 * (r + 1));
    t.push_back(encode({comp(1, 1), a2a, comp(3, 1, {2})}, &meta));
  }
  return t;
}

Trace named_groups() {
  Trace t;
  for (int r = 0; r < 4; ++r) {
    const std::string tp = r < 2 ? "tp0" : "TENSOR_MODEL_PARALLEL_GROUP_1";
    std::vector<pb::Node> nodes = {coll(1, pb::ALL_GATHER, 64, tp),
                                   coll(2, pb::BARRIER, -1, "", {1}),
                                   coll(3, pb::REDUCE_SCATTER, 32, "7", {2})};
    if (r == 0 || r == 3) nodes.push_back(coll(4, pb::BROADCAST, 16, "pipe-0-3", {3}));
    t.push_back(encode(nodes));
  }
  return t;
}

Trace rooted_collectives() {
  Trace t;
  for (int r = 0; r < 2; ++r) {
    t.push_back(encode({coll(1, pb::REDUCE, 8, "data"), coll(2, pb::GATHER, 8, "data", {1}),
                        coll(3, pb::SCATTER, 8, "data", {2}),
                        coll(4, pb::REDUCE_SCATTER_BLOCK, 8, "data", {3})}));
  }
  return t;
}

std::string join(const Trace& t, bool compress) {
  std::string out;
  for (std::size_t r = 0; r < t.size(); ++r) {
    if (r > 0) out += kRankSeparator;
    out += compress ? gzip(t[r]) : t[r];
  }
  return out;
}

void write(const std::filesystem::path& dir, const std::string& name, const std::string& bytes) {
  std::filesystem::create_directories(dir);
  std::ofstream out(dir / name, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s PLAIN_DIR GZIP_DIR\n", argv[0]);
    return 2;
  }
  const std::vector<std::pair<std::string, Trace>> traces = {
      {"compute_chain", compute_chain()},
      {"all_reduce_send_recv", all_reduce_and_send_recv()},
      {"all_to_all_v", all_to_all_v()},
      {"named_groups", named_groups()},
      {"rooted_collectives", rooted_collectives()},
  };
  for (const auto& [name, trace] : traces) {
    write(argv[1], name + ".et", join(trace, false));
    write(argv[1], name + ".gz.et", join(trace, true));
    write(argv[2], name + ".et", join(trace, false));
  }
  return 0;
}
