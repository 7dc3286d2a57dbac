#include "core/spec.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <charconv>
#include <cmath>

#include "core/error.h"
#include "core/output_text.h"

namespace mfabric {
namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

}  // namespace

Spec::Spec(std::string name, std::map<std::string, std::string> params)
    : name_(std::move(name)), params_(std::move(params)) {}

Spec Spec::parse(const std::string& text) {
  const auto colon = text.find(':');
  Spec spec;
  spec.name_ = trim(text.substr(0, colon));
  if (spec.name_.empty()) {
    throw Error(
        fmt::format("{} has no name; expected NAME or NAME:key=value,...", quote_input(text)));
  }
  if (colon == std::string::npos) return spec;
  const std::string rest = text.substr(colon + 1);
  std::size_t pos = 0;
  while (pos <= rest.size()) {
    auto comma = rest.find(',', pos);
    if (comma == std::string::npos) comma = rest.size();
    const std::string item = trim(rest.substr(pos, comma - pos));
    const auto eq = item.find('=');
    if (item.empty() || eq == std::string::npos || eq == 0 || eq + 1 == item.size()) {
      throw Error(fmt::format("malformed parameter {} in {}; expected key=value", quote_input(item),
                              quote_input(text)));
    }
    const std::string key = trim(item.substr(0, eq));
    if (spec.params_.count(key)) {
      throw Error(
          fmt::format("parameter {} given twice in {}", quote_input(key), quote_input(text)));
    }
    spec.params_[key] = trim(item.substr(eq + 1));
    pos = comma + 1;
  }
  return spec;
}

const std::string* Spec::lookup(const std::string& key) {
  auto it = params_.find(key);
  if (it == params_.end()) return nullptr;
  read_.insert(key);
  return &it->second;
}

std::string Spec::get_string(const std::string& key, const std::string& fallback) {
  const std::string* v = lookup(key);
  return v ? *v : fallback;
}

int Spec::get_int(const std::string& key, int fallback) {
  return get_optional_int(key).value_or(fallback);
}

std::optional<int> Spec::get_optional_int(const std::string& key) {
  const std::string* v = lookup(key);
  if (!v) return std::nullopt;
  int out = 0;
  auto [ptr, ec] = std::from_chars(v->data(), v->data() + v->size(), out);
  if (ec != std::errc() || ptr != v->data() + v->size()) {
    throw Error("", key, fmt::format("expected a whole number, got {}", quote_input(*v)));
  }
  return out;
}

double Spec::get_double(const std::string& key, double fallback) {
  const std::string* v = lookup(key);
  if (!v) return fallback;
  double out = 0;
  auto [ptr, ec] = std::from_chars(v->data(), v->data() + v->size(), out);
  if (ec != std::errc() || ptr != v->data() + v->size() || !std::isfinite(out)) {
    throw Error("", key, fmt::format("expected a number, got {}", quote_input(*v)));
  }
  return out;
}

Time Spec::get_time(const std::string& key, Time fallback) {
  const std::string* v = lookup(key);
  if (!v) return fallback;
  return with_context("", key, [&] { return parse_time(*v); });
}

Rate Spec::get_rate(const std::string& key, Rate fallback) {
  const std::string* v = lookup(key);
  if (!v) return fallback;
  return with_context("", key, [&] { return parse_rate(*v); });
}

void Spec::finish(const std::vector<std::string>& accepted) const {
  for (const auto& [key, value] : params_) {
    if (!read_.count(key)) {
      throw Error(fmt::format(
          "unknown parameter {} for {} (accepted: {})", quote_input(key), name_,
          accepted.empty() ? std::string("none") : fmt::format("{}", fmt::join(accepted, ", "))));
    }
  }
}

std::string Spec::to_string() const {
  if (params_.empty()) return name_;
  std::string out = name_ + ":";
  bool first = true;
  for (const auto& [k, v] : params_) {
    if (!first) out += ",";
    out += k + "=" + v;
    first = false;
  }
  return out;
}

}  // namespace mfabric
