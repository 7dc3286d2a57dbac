// Small text helpers the tests share: a file's bytes, and the message of the mfabric::Error a
// call throws.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>

#include "core/error.h"

namespace mfabric::testing {

// The whole file as bytes ("" when it cannot be read).
inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
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
