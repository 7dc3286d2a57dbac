// Writing Chakra traces independently of the reader: node builders with the generated protobuf
// classes, Chakra's [varint length][message] framing written as a plain varint loop, and gzip
// with zlib directly, so that what reads them is checked against the format, not against itself.
// Used by the reader's tests (chakra_test_util.h) and the fuzzing seed generator
// (fuzz/make_chakra_seeds.cpp); no GoogleTest here.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "workload/chakra/et_def.pb.h"

namespace mfabric::workload::chakra_testing {

namespace pb = ChakraProtoMsg;

inline void add_int(pb::Node& n, const std::string& name, std::int64_t v) {
  auto* a = n.add_attr();
  a->set_name(name);
  a->set_int64_val(v);
}

inline void add_string(pb::Node& n, const std::string& name, const std::string& v) {
  auto* a = n.add_attr();
  a->set_name(name);
  a->set_string_val(v);
}

inline void add_list(pb::Node& n, const std::string& name,
                     std::initializer_list<std::int64_t> values) {
  auto* a = n.add_attr();
  a->set_name(name);
  for (std::int64_t v : values)
    a->mutable_int64_list()->add_values(v);
}

inline pb::Node make(std::uint64_t id, pb::NodeType type,
                     std::initializer_list<std::uint64_t> deps = {}, const std::string& name = "") {
  pb::Node n;
  n.set_id(id);
  n.set_name(name.empty() ? "n" + std::to_string(id) : name);
  n.set_type(type);
  for (std::uint64_t d : deps)
    n.add_data_deps(d);
  return n;
}

inline pb::Node comp(std::uint64_t id, std::uint64_t micros,
                     std::initializer_list<std::uint64_t> deps = {}) {
  pb::Node n = make(id, pb::COMP_NODE, deps);
  n.set_duration_micros(micros);
  return n;
}

// A compute node whose only dependencies are control dependencies.
inline pb::Node comp_ctrl(std::uint64_t id, std::uint64_t micros,
                          std::initializer_list<std::uint64_t> ctrl_deps) {
  pb::Node n = comp(id, micros);
  for (std::uint64_t d : ctrl_deps)
    n.add_ctrl_deps(d);
  return n;
}

inline pb::Node coll(std::uint64_t id, pb::CollectiveCommType type, std::int64_t size,
                     const std::string& pg, std::initializer_list<std::uint64_t> deps = {}) {
  pb::Node n = make(id, pb::COMM_COLL_NODE, deps);
  add_int(n, "comm_type", type);
  if (size >= 0) add_int(n, "comm_size", size);
  if (!pg.empty()) add_string(n, "pg_name", pg);
  return n;
}

inline pb::Node send(std::uint64_t id, int dst, std::int64_t size, int tag,
                     std::initializer_list<std::uint64_t> deps = {}) {
  pb::Node n = make(id, pb::COMM_SEND_NODE, deps);
  add_int(n, "comm_dst", dst);
  add_int(n, "comm_size", size);
  auto* a = n.add_attr();  // int32 as in the schema's documentation
  a->set_name("comm_tag");
  a->set_int32_val(tag);
  return n;
}

inline pb::Node recv(std::uint64_t id, int src, std::int64_t size, int tag,
                     std::initializer_list<std::uint64_t> deps = {}) {
  pb::Node n = make(id, pb::COMM_RECV_NODE, deps);
  add_int(n, "comm_src", src);
  add_int(n, "comm_size", size);
  auto* a = n.add_attr();
  a->set_name("comm_tag");
  a->set_int32_val(tag);
  return n;
}

// A varint, as protobuf encodes lengths.
inline void varint(std::string& out, std::uint64_t n) {
  do {
    const auto low = static_cast<unsigned char>(n & 0x7f);
    n >>= 7;
    out.push_back(static_cast<char>(n != 0 ? (low | 0x80) : low));
  } while (n != 0);
}

// [varint length][message], as Chakra's writers frame every message.
inline void frame(std::string& out, const google::protobuf::MessageLite& m) {
  const std::string body = m.SerializeAsString();
  varint(out, body.size());
  out += body;
}

inline pb::GlobalMetadata default_metadata() {
  pb::GlobalMetadata meta;
  meta.set_version("0.0.4");
  return meta;
}

inline std::string encode(const std::vector<pb::Node>& nodes,
                          const pb::GlobalMetadata* meta = nullptr) {
  std::string out;
  frame(out, meta != nullptr ? *meta : default_metadata());
  for (const pb::Node& n : nodes)
    frame(out, n);
  return out;
}

// One gzip member (zlib's deflate with a gzip header and trailer) into `out`; false when zlib
// fails.
inline bool gzip_member(const std::string& in, int level, std::string& out) {
  z_stream zs{};
  if (deflateInit2(&zs, level, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    return false;
  }
  out.assign(deflateBound(&zs, static_cast<uLong>(in.size())), '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  const bool done = deflate(&zs, Z_FINISH) == Z_STREAM_END;
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return done;
}

}  // namespace mfabric::workload::chakra_testing
