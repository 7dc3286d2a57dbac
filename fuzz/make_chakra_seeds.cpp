// Writes the seed inputs of the chakra and chakra_gzip harnesses: small valid traces (compute
// chains, all-reduce, send/receive, all-to-all-v with a declared group, named groups, rooted
// collectives), each rank's file framed as Chakra's writers frame it and the ranks joined by the
// harness's separator. Usage: mfabric_fuzz_chakra_seeds PLAIN_DIR GZIP_DIR
//   PLAIN_DIR gets every trace as plain protobuf and a copy with gzip-compressed rank files;
//   GZIP_DIR gets the plain traces only (that harness compresses each rank itself).
#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <vector>

#include "workload/chakra/et_def.pb.h"

namespace {

namespace pb = ChakraProtoMsg;

constexpr const char* kRankSeparator = "@@rank@@";  // as in chakra_fuzz.cpp

void add_int(pb::Node& n, const std::string& name, std::int64_t v) {
  auto* a = n.add_attr();
  a->set_name(name);
  a->set_int64_val(v);
}

void add_string(pb::Node& n, const std::string& name, const std::string& v) {
  auto* a = n.add_attr();
  a->set_name(name);
  a->set_string_val(v);
}

pb::Node make(std::uint64_t id, pb::NodeType type, std::initializer_list<std::uint64_t> deps = {}) {
  pb::Node n;
  n.set_id(id);
  n.set_name("n" + std::to_string(id));
  n.set_type(type);
  for (std::uint64_t d : deps)
    n.add_data_deps(d);
  return n;
}

pb::Node comp(std::uint64_t id, std::uint64_t micros,
              std::initializer_list<std::uint64_t> deps = {}) {
  pb::Node n = make(id, pb::COMP_NODE, deps);
  n.set_duration_micros(micros);
  return n;
}

pb::Node coll(std::uint64_t id, pb::CollectiveCommType type, std::int64_t size,
              const std::string& pg, std::initializer_list<std::uint64_t> deps = {}) {
  pb::Node n = make(id, pb::COMM_COLL_NODE, deps);
  add_int(n, "comm_type", type);
  if (size >= 0) add_int(n, "comm_size", size);
  if (!pg.empty()) add_string(n, "pg_name", pg);
  return n;
}

pb::Node p2p(std::uint64_t id, pb::NodeType type, const char* peer_key, int peer, std::int64_t size,
             int tag, std::initializer_list<std::uint64_t> deps = {}) {
  pb::Node n = make(id, type, deps);
  add_int(n, peer_key, peer);
  add_int(n, "comm_size", size);
  auto* a = n.add_attr();
  a->set_name("comm_tag");
  a->set_int32_val(tag);
  return n;
}

void frame(std::string& out, const google::protobuf::MessageLite& m) {
  const std::string body = m.SerializeAsString();
  std::uint64_t n = body.size();
  do {
    const auto low = static_cast<unsigned char>(n & 0x7f);
    n >>= 7;
    out.push_back(static_cast<char>(n != 0 ? (low | 0x80) : low));
  } while (n != 0);
  out += body;
}

std::string encode(const std::vector<pb::Node>& nodes, const pb::GlobalMetadata* meta = nullptr) {
  std::string out;
  pb::GlobalMetadata default_meta;
  default_meta.set_version("0.0.4");
  frame(out, meta != nullptr ? *meta : default_meta);
  for (const pb::Node& n : nodes)
    frame(out, n);
  return out;
}

std::string gzip(const std::string& in) {
  z_stream zs{};
  deflateInit2(&zs, Z_BEST_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&zs, static_cast<uLong>(in.size())), '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
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
    pb::Node peer = r == 0 ? p2p(4, pb::COMM_SEND_NODE, "comm_dst", 1, 4096, 7, {3})
                           : p2p(4, pb::COMM_RECV_NODE, "comm_src", 0, 4096, 7, {3});
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
