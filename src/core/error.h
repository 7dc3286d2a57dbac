// The one error type of mfabric. It carries where the problem is (a file, or "command line"),
// which field (a YAML path such as "link_speeds.400G.nic", or an option such as "--servers") and
// what was expected, so that every message a user sees can be acted on:
//
//   prices.yaml: link_speeds.400G.nic: expected a non-negative price in dollars, got 'abc'
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

namespace mfabric {

class Error : public std::runtime_error {
 public:
  explicit Error(std::string message) : Error("", "", std::move(message)) {}
  Error(std::string source, std::string field, std::string message);

  const std::string& source() const { return source_; }
  const std::string& field() const { return field_; }
  const std::string& message() const { return message_; }

  // The same error located in `source` / under `field`. A field already present is kept as a
  // sub-path: in("f.yaml", "cluster") on an error for field "link" gives "cluster.link".
  Error in(const std::string& source, const std::string& field = "") const;

 private:
  std::string source_;
  std::string field_;
  std::string message_;
};

// Runs fn(); an Error thrown inside is re-thrown located in source/field.
template <class F>
auto with_context(const std::string& source, const std::string& field, F&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const Error& e) {
    throw e.in(source, field);
  }
}

}  // namespace mfabric
