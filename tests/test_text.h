// Small text helpers the tests share: a file's bytes, and the message of the mfabric::Error a
// call throws.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"

namespace mfabric::testing {

// The whole file as bytes ("" when it cannot be read).
inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The lines of `text`, without their newlines (a last line without one counts).
inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);)
    out.push_back(line);
  return out;
}

// A CSV mfabric wrote without its first line when that is the provenance comment ("# mfabric
// VERSION; command: ...", core/provenance.h), checked to be one: the header and the rows.
inline std::string csv_body(const std::string& csv) {
  if (csv.rfind("# mfabric ", 0) != 0) return csv;
  const std::size_t end = csv.find('\n');
  return end == std::string::npos ? std::string() : csv.substr(end + 1);
}

// The text of the mfabric::Error that fn throws ("file: field: message"), or "" when it throws
// none. Any other exception propagates and fails the test.
template <typename Fn>
std::string error_text(Fn&& fn) {
  try {
    std::forward<Fn>(fn)();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace mfabric::testing
