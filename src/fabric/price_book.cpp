// PriceBook: the paper's Table 4 and YAML overrides (format in docs/cost-model.md).
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <iterator>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/yaml_fields.h"
#include "fabric/cost.h"

namespace mfabric::fabric {
namespace {

// The price fields of one link speed, in the order files and messages list them.
struct PriceField {
  const char* name;
  double LinkPrices::*member;
};
constexpr std::array<PriceField, 6> kPriceFields{{
    {"transceiver", &LinkPrices::transceiver},
    {"nic", &LinkPrices::nic},
    {"switch_port", &LinkPrices::switch_port},
    {"ocs_port", &LinkPrices::ocs_port},
    {"patch_panel_port", &LinkPrices::patch_panel_port},
    {"fibre_per_m", &LinkPrices::fibre_per_m},
}};

std::string known_price_fields() {
  std::string out;
  for (const PriceField& f : kPriceFields)
    out += (out.empty() ? "" : ", ") + std::string(f.name);
  return out;
}

// Rates are keyed by bits per second as doubles; "1.6T" and "1600G" may differ in the last bit,
// so lookups accept a relative difference far below any real difference between link speeds.
bool same_speed(double a, double b) {
  return std::fabs(a - b) <= 1e-9 * std::max(a, b);
}

template <class Map>
auto find_speed(Map& speeds, double bps) -> decltype(speeds.begin()) {
  auto it = speeds.lower_bound(bps);
  if (it != speeds.end() && same_speed(it->first, bps)) return it;
  if (it != speeds.begin() && same_speed(std::prev(it)->first, bps)) return std::prev(it);
  return speeds.end();
}

// A finite number in [0, max]. yaml-cpp's as<double>() would also take ".inf" and ".nan",
// which make no sense as a price, so the scalar is parsed here. The cap keeps every cost far
// inside what a double holds exactly to the cent (docs/cost-model.md).
double bounded_number(const YAML::Node& node, const std::string& source, const std::string& field,
                      const char* what, double max, const char* unit) {
  if (node.IsScalar()) {
    const std::string& text = node.Scalar();
    double value = 0;
    const char* begin = text.data();
    const char* end = text.data() + text.size();
    if (begin != end && *begin == '+') ++begin;
    auto [ptr, ec] = std::from_chars(begin, end, value);
    const bool parsed = ptr == end && begin != end;
    if (parsed && ((ec == std::errc() && std::isfinite(value) && value > max) ||
                   (ec == std::errc::result_out_of_range && *begin != '-'))) {
      throw Error(
          source, field,
          fmt::format("expected {} of at most {:.0f} {}, got {}", what, max, unit, describe(node)));
    }
    if (ec == std::errc() && parsed && std::isfinite(value) && value >= 0) return value;
  }
  throw Error(source, field, fmt::format("expected {}, got {}", what, describe(node)));
}

// Map keys must be plain text; yaml-cpp would otherwise throw its own conversion error.
std::string key_text(const YAML::Node& key, const std::string& source, const std::string& parent) {
  if (!key.IsScalar()) {
    throw Error(source, parent,
                fmt::format("expected plain text keys, got {} as a key", describe(key)));
  }
  return key.Scalar();
}

void check_map(const YAML::Node& node, const std::string& source, const std::string& field,
               const std::string& expected) {
  if (!node.IsMap()) {
    throw Error(source, field, fmt::format("expected {}, got {}", expected, describe(node)));
  }
}

void load_speed(PriceBook& book, const std::string& key, const YAML::Node& fields,
                const std::string& source, std::vector<double>& seen) {
  const std::string field = "link_speeds." + key;
  Rate rate;
  try {
    rate = parse_rate(key);
  } catch (const Error& e) {
    throw Error(source, field,
                fmt::format("expected a link speed such as '400G' or '1600Gbps' as the key: {}",
                            e.message()));
  }
  if (rate.bps() <= 0) {
    throw Error(source, field, fmt::format("link speed must be positive, got '{}'", key));
  }
  for (double s : seen) {
    if (same_speed(s, rate.bps())) {
      throw Error(source, field, fmt::format("link speed {} is given twice", link_label(rate)));
    }
  }
  seen.push_back(rate.bps());

  check_map(fields, source, field,
            fmt::format("a map of prices in dollars ({})", known_price_fields()));

  const auto& speeds = book.speeds();
  auto known = find_speed(speeds, rate.bps());
  const bool is_new = known == speeds.end();
  LinkPrices prices = is_new ? LinkPrices{} : known->second;
  std::array<bool, kPriceFields.size()> given{};
  for (const auto& entry : fields) {
    const std::string name = key_text(entry.first, source, field);
    std::size_t i = 0;
    while (i < kPriceFields.size() && name != kPriceFields[i].name)
      ++i;
    if (i == kPriceFields.size()) {
      throw Error(source, field + "." + name,
                  fmt::format("unknown price field (known: {})", known_price_fields()));
    }
    const bool per_metre = i + 1 == kPriceFields.size();
    prices.*kPriceFields[i].member = bounded_number(
        entry.second, source, field + "." + name,
        per_metre ? "a non-negative price in dollars per metre" : "a non-negative price in dollars",
        kMaxUnitPriceUsd, per_metre ? "dollars per metre" : "dollars");
    if (given[i]) throw Error(source, field + "." + name, "is given twice");
    given[i] = true;
  }
  // A new speed has no defaults to fall back on; a silent zero would make it look free.
  if (is_new) {
    std::string missing;
    for (std::size_t i = 0; i < kPriceFields.size(); ++i) {
      if (!given[i]) missing += (missing.empty() ? "" : ", ") + std::string(kPriceFields[i].name);
    }
    if (!missing.empty()) {
      throw Error(source, field,
                  fmt::format("{} is not in the built-in price table, so all six prices ({}) "
                              "are needed; missing: {}",
                              link_label(rate), known_price_fields(), missing));
    }
    book.set(rate, prices);
  } else {
    // Keep the existing key so that lookups by the canonical rate stay exact.
    book.set(Rate::bits_per_second(known->first), prices);
  }
}

}  // namespace

PriceBook PriceBook::paper_defaults() {
  // Paper Table 4: transceiver, NIC, switch port, OCS port, patch-panel port, fibre per metre.
  PriceBook book;
  book.set(Rate::gbps(100), LinkPrices{99, 659, 187, 520, 100, 0.3});
  book.set(Rate::gbps(200), LinkPrices{239, 1079, 374, 520, 100, 0.3});
  book.set(Rate::gbps(400), LinkPrices{659, 1499, 1090, 520, 100, 0.3});
  book.set(Rate::gbps(800), LinkPrices{1399, 2248, 1400, 520, 100, 0.3});
  book.set_fibre_length_m(500);
  return book;
}

PriceBook PriceBook::load(const std::string& path) {
  PriceBook book = paper_defaults();
  const std::string text =
      read_yaml_file(path, "price file", "a YAML price file (docs/cost-model.md)");
  const YAML::Node root = parse_yaml(text, path);
  // An empty (or comment-only) file overrides nothing.
  if (root.IsNull()) return book;
  check_map(root, path, "",
            "a map at the top level with link_speeds and optionally fibre_length_m");

  std::vector<std::string> seen_keys;
  for (const auto& entry : root) {
    const std::string key = key_text(entry.first, path, "");
    if (std::find(seen_keys.begin(), seen_keys.end(), key) != seen_keys.end()) {
      throw Error(path, key, "is given twice");
    }
    seen_keys.push_back(key);
    if (key == "fibre_length_m") {
      book.set_fibre_length_m(bounded_number(entry.second, path, key,
                                             "a non-negative fibre length in metres",
                                             kMaxFibreLengthM, "metres"));
    } else if (key == "link_speeds") {
      // An empty "link_speeds:" is allowed: it overrides nothing.
      if (entry.second.IsNull()) continue;
      check_map(entry.second, path, key, "a map from link speed (such as '400G') to prices");
      std::vector<double> seen;
      for (const auto& speed : entry.second) {
        load_speed(book, key_text(speed.first, path, key), speed.second, path, seen);
      }
    } else {
      throw Error(path, key, "unknown key (known: fibre_length_m, link_speeds)");
    }
  }
  return book;
}

const LinkPrices& PriceBook::at(Rate link) const {
  auto it = find_speed(speeds_, link.bps());
  if (it != speeds_.end()) return it->second;
  std::string known;
  for (const auto& [bps, prices] : speeds_) {
    known += (known.empty() ? "" : ", ") + link_label(Rate::bits_per_second(bps));
  }
  if (known.empty()) known = "none";
  throw Error("", "link",
              fmt::format("no prices for link speed {} (known: {}); add it to a price file",
                          link_label(link), known));
}

LinkPrices PriceBook::price_at(Rate rate) const {
  if (speeds_.empty() || !(rate.bps() > 0)) return at(rate);  // the error names the speeds
  const auto exact = find_speed(speeds_, rate.bps());
  if (exact != speeds_.end()) return exact->second;
  // The active parts (NIC, transceiver, switch port) are priced by bandwidth; the passive ones
  // (OCS and patch-panel ports, fibre) carry any rate and keep the nearest speed's price.
  const auto scaled = [](const LinkPrices& p, double k) {
    LinkPrices out = p;
    out.nic *= k;
    out.transceiver *= k;
    out.switch_port *= k;
    return out;
  };
  const auto above = speeds_.upper_bound(rate.bps());
  if (above == speeds_.begin()) return scaled(above->second, rate.bps() / above->first);
  const auto below = std::prev(above);
  if (above == speeds_.end()) return scaled(below->second, rate.bps() / below->first);
  const double w = (rate.bps() - below->first) / (above->first - below->first);
  LinkPrices out;
  for (const PriceField& f : kPriceFields) {
    out.*f.member =
        below->second.*f.member + w * (above->second.*f.member - below->second.*f.member);
  }
  return out;
}

}  // namespace mfabric::fabric
