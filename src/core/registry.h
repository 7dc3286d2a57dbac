// One small registry for every kind of plug-in mfabric has: fabric kinds, planners, collective
// lowerings, network backends, packet transports, control policies and CLI commands. An entry is
// a name, a one-line description and a factory; help text, error messages ("unknown backend 'x'
// (known: flow, packet)") and the lists in docs/plugins.md are produced from the entries, so a new
// plug-in is its own unit plus one registry line, and no list of names is written by hand.
//
// Registries are filled once (a function-local static listing the built-in entries, one line
// each) and then only read, from any thread. `add` is for a test's toy entry or an embedding
// program's own, before any concurrent use; entries live in a deque, so a reference to one stays
// valid when another is added.
#pragma once

#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.h"

namespace mfabric {

template <class Factory>
class Registry {
 public:
  struct Entry {
    std::string name;
    std::string description;  // one line, for help and docs
    Factory factory;
  };

  // `what` names an entry in messages: "fabric", "planner", "collective algorithm".
  Registry(std::string what, std::vector<Entry> entries) : what_(std::move(what)) {
    for (Entry& e : entries)
      add(std::move(e));
  }

  // Adds an entry at the end; throws mfabric::Error for an empty name or one already there.
  const Entry& add(Entry entry) {
    if (entry.name.empty()) throw Error("", "", "a " + what_ + " needs a name");
    if (find(entry.name) != nullptr) {
      throw Error("", "", what_ + " '" + entry.name + "' is registered twice");
    }
    entries_.push_back(std::move(entry));
    return entries_.back();
  }

  // The entry named `name`, or null.
  const Entry* find(std::string_view name) const {
    for (const Entry& e : entries_) {
      if (e.name == name) return &e;
    }
    return nullptr;
  }
  bool contains(std::string_view name) const { return find(name) != nullptr; }

  // The entry named `name`; mfabric::Error "unknown WHAT 'name' (known: a, b, c)" otherwise
  // (callers locate it: a file, a field, an option).
  const Entry& at(std::string_view name) const {
    if (const Entry* e = find(name)) return *e;
    throw Error("", "",
                "unknown " + what_ + " '" + std::string(name) + "' (known: " + known() + ")");
  }

  // Names in registration order.
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    out.reserve(entries_.size());
    for (const Entry& e : entries_)
      out.push_back(e.name);
    return out;
  }
  // "a, b, c", for messages.
  std::string known() const {
    std::string out;
    for (const Entry& e : entries_)
      out += (out.empty() ? "" : ", ") + e.name;
    return out;
  }
  const std::deque<Entry>& entries() const { return entries_; }
  const std::string& what() const { return what_; }

 private:
  std::string what_;
  std::deque<Entry> entries_;
};

// The factory of a registry of `Base` objects that makes a default-constructed `T`:
// {"ring", "...", make_as<Lowering, RingLowering>}.
template <class Base, class T>
std::unique_ptr<Base> make_as() {
  return std::make_unique<T>();
}

}  // namespace mfabric
