// A named thing with parameters, as users write it on the command line or in YAML:
//   "fat-tree:oversubscription=3,radix=16"   or   {kind: fat-tree, oversubscription: 3}
// Consumers read parameters with typed getters and then call finish(), which rejects any
// parameter nobody read, so that a typo ("radx=16") is an error, not a silent default.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/units.h"

namespace mfabric {

class Spec {
 public:
  Spec() = default;
  Spec(std::string name, std::map<std::string, std::string> params);

  // Parses "name" or "name:key=value,key=value". Throws Error on malformed text.
  static Spec parse(const std::string& text);

  const std::string& name() const { return name_; }
  const std::map<std::string, std::string>& params() const { return params_; }
  bool has(const std::string& key) const { return params_.count(key) > 0; }

  // Typed getters; the error names the parameter and what was expected. Each marks the key read.
  int get_int(const std::string& key, int fallback);
  double get_double(const std::string& key, double fallback);
  Time get_time(const std::string& key, Time fallback);
  Rate get_rate(const std::string& key, Rate fallback);
  std::string get_string(const std::string& key, const std::string& fallback);
  std::optional<int> get_optional_int(const std::string& key);

  // Throws if a parameter was never read, listing the ones `name` accepts.
  void finish(const std::vector<std::string>& accepted) const;

  // Canonical text: name plus parameters in key order ("fat-tree:oversubscription=3").
  std::string to_string() const;

 private:
  const std::string* lookup(const std::string& key);

  std::string name_;
  std::map<std::string, std::string> params_;
  std::set<std::string> read_;
};

}  // namespace mfabric
