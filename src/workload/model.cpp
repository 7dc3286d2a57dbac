// Model zoo, model YAML parsing and parameter counts. Format: docs/workload.md, "Model files".
#include "workload/model.h"
#include "workload/model_recipe.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <optional>
#include <set>

#include "core/error.h"
#include "core/output_text.h"
#include "core/suggest.h"
#include "core/yaml_fields.h"
#include "workload/embedded_yaml.h"

namespace mfabric::workload {

// Parameter counts, in elements. Conventions (docs/workload.md, "Parameter counts"):
//  - no biases (none of the zoo models has them except Qwen's q/k/v biases, < 0.01%);
//  - a gated FFN (SwiGLU) has 3 matrices hidden x ffn (gate, up, down), a plain FFN 2;
//  - RMSNorm weights: 2 x hidden per layer plus the final norm, counted in total_params() only;
//  - input embedding and LM head are separate matrices (no zoo model ties them).
// The formulas are templates so that parse_model() can evaluate them in floating point first
// and reject dimensions whose 64-bit counts would overflow.
namespace {

template <class N>
N count_attention(const ModelSpec& m) {
  const N h = static_cast<N>(m.hidden);
  const AttentionSpec& a = m.attention;
  const N heads = static_cast<N>(a.heads);
  if (a.kind == "mla") {
    const N qk = static_cast<N>(a.qk_nope_head_dim) + static_cast<N>(a.qk_rope_head_dim);
    const N q_lora = static_cast<N>(a.q_lora_rank);
    const N kv_lora = static_cast<N>(a.kv_lora_rank);
    // Query: down-projection to q_lora_rank, its RMSNorm, up-projection to every head's
    // (nope + rope) dims; with q_lora_rank 0 a single full-rank projection (DeepSeek-V2-Lite).
    const N q = a.q_lora_rank > 0 ? h * q_lora + q_lora + q_lora * heads * qk : h * heads * qk;
    // Key/value: down-projection to the latent (kv_lora_rank) plus the shared rope key, the
    // latent's RMSNorm, and the up-projection to every head's nope key and value.
    const N kv =
        h * (kv_lora + static_cast<N>(a.qk_rope_head_dim)) + kv_lora +
        kv_lora * heads * (static_cast<N>(a.qk_nope_head_dim) + static_cast<N>(a.v_head_dim));
    const N o = heads * static_cast<N>(a.v_head_dim) * h;
    return q + kv + o;
  }
  // q and o: hidden x heads x head_dim each; k and v: hidden x kv_heads x head_dim each.
  const N hd = static_cast<N>(a.head_dim);
  const N q = h * heads * hd;
  const N kv = 2 * h * static_cast<N>(a.kv_heads) * hd;
  const N o = heads * hd * h;
  return q + kv + o;
}

template <class N>
N count_ffn(const ModelSpec& m, int ffn) {
  return static_cast<N>(m.gated_ffn ? 3 : 2) * static_cast<N>(m.hidden) * static_cast<N>(ffn);
}

template <class N>
N count_total(const ModelSpec& m) {
  const N h = static_cast<N>(m.hidden);
  const N per_layer = count_attention<N>(m) + 2 * h;  // + two RMSNorms
  // A MoE layer: routed experts, shared experts, and the gate (one hidden x experts matrix).
  const N moe = static_cast<N>(m.experts) * count_ffn<N>(m, m.ffn_expert) +
                static_cast<N>(m.shared_experts) * count_ffn<N>(m, m.ffn_shared) +
                h * static_cast<N>(m.experts);
  return 2 * static_cast<N>(m.vocab) * h  // embedding + LM head
         + h                              // final norm
         + static_cast<N>(m.layers) * per_layer +
         static_cast<N>(m.dense_layers) * count_ffn<N>(m, m.ffn_dense) +
         static_cast<N>(m.moe_layers()) * moe;
}

}  // namespace

std::int64_t ModelSpec::attention_params_per_layer() const {
  return count_attention<std::int64_t>(*this);
}
std::int64_t ModelSpec::expert_params() const {
  return count_ffn<std::int64_t>(*this, ffn_expert);
}
std::int64_t ModelSpec::shared_expert_params() const {
  return shared_experts * count_ffn<std::int64_t>(*this, ffn_shared);
}
std::int64_t ModelSpec::dense_ffn_params() const {
  return count_ffn<std::int64_t>(*this, ffn_dense);
}
std::int64_t ModelSpec::router_params() const {
  return std::int64_t{hidden} * experts;
}
std::int64_t ModelSpec::total_params() const {
  return count_total<std::int64_t>(*this);
}

namespace {

// Range checks; each names the field and the allowed range. Dimensions stay below 2^20 (far
// above any real model) so that bytes = tokens x dimension x dtype can never overflow 64 bits.
constexpr int kMaxDimension = 1 << 20;

void check_positive(const Fields& f, const std::string& key, int value, int max = kMaxDimension) {
  if (value <= 0) {
    throw Error(f.source(), f.field(key),
                fmt::format("expected a positive integer, got {}", value));
  }
  if (value > max) {
    throw Error(f.source(), f.field(key),
                fmt::format("expected a positive integer of at most {}, got {}", max, value));
  }
}

void check_non_negative(const Fields& f, const std::string& key, int value) {
  if (value < 0 || value > kMaxDimension) {
    throw Error(f.source(), f.field(key),
                fmt::format("expected an integer from 0 to {}, got {}", kMaxDimension, value));
  }
}

const std::vector<std::string> kModelFields = {
    "name",       "description", "layers",    "hidden",         "attention",  "ffn_dense",
    "ffn_expert", "experts",     "top_k",     "shared_experts", "ffn_shared", "dense_layers",
    "vocab",      "dtype_bytes", "gated_ffn", "aliases",        "recipe"};
const std::vector<std::string> kAttentionFields = {
    "kind",        "heads",        "kv_heads",         "head_dim",
    "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim",
    "v_head_dim"};
const std::vector<std::string> kMlaFields = {"q_lora_rank", "kv_lora_rank", "qk_nope_head_dim",
                                             "qk_rope_head_dim", "v_head_dim"};

AttentionSpec parse_attention(const YAML::Node& node, const std::string& source, int hidden) {
  if (!node) throw Error(source, "attention", "is required; expected a map (kind, heads, ...)");
  if (!node.IsMap()) {
    throw Error(source, "attention",
                fmt::format("expected a map (kind, heads, ...), got {}", describe(node)));
  }
  const Fields f(node, source, "attention", kAttentionFields);
  AttentionSpec a;
  const auto kind = f.optional_string("kind");
  if (!kind) throw Error(source, f.field("kind"), "is required; expected mha, gqa or mla");
  a.kind = *kind;
  if (a.kind != "mha" && a.kind != "gqa" && a.kind != "mla") {
    throw Error(source, f.field("kind"),
                fmt::format("expected mha, gqa or mla, got {}", quote_input(a.kind)));
  }
  a.heads = f.required_int("heads");
  check_positive(f, "heads", a.heads);

  if (a.kind == "mla") {
    // Latent attention has its own head dimensions; the mha/gqa fields would be ignored, so
    // giving them is an error rather than a silent no-op.
    for (const char* key : {"kv_heads", "head_dim"}) {
      if (f.has(key)) {
        throw Error(source, f.field(key),
                    "not used by mla (use qk_nope_head_dim, qk_rope_head_dim, v_head_dim)");
      }
    }
    a.q_lora_rank = f.required_int("q_lora_rank");
    check_non_negative(f, "q_lora_rank", a.q_lora_rank);  // 0: full-rank query projection
    a.kv_lora_rank = f.required_int("kv_lora_rank");
    check_positive(f, "kv_lora_rank", a.kv_lora_rank);
    a.qk_nope_head_dim = f.required_int("qk_nope_head_dim");
    check_positive(f, "qk_nope_head_dim", a.qk_nope_head_dim);
    a.qk_rope_head_dim = f.required_int("qk_rope_head_dim");
    check_positive(f, "qk_rope_head_dim", a.qk_rope_head_dim);
    a.v_head_dim = f.required_int("v_head_dim");
    check_positive(f, "v_head_dim", a.v_head_dim);
    // Every head has its own key and value after the up-projection; head_dim is the query/key
    // width the scores use.
    a.kv_heads = a.heads;
    a.head_dim = a.qk_nope_head_dim + a.qk_rope_head_dim;
    return a;
  }

  for (const std::string& key : kMlaFields) {
    if (f.has(key))
      throw Error(source, f.field(key), fmt::format("only used by mla, not {}", a.kind));
  }
  if (const auto hd = f.optional_int("head_dim")) {
    a.head_dim = *hd;
    check_positive(f, "head_dim", a.head_dim);
  } else {
    if (hidden % a.heads != 0) {
      throw Error(source, f.field("heads"),
                  fmt::format("{} heads do not divide hidden {}; give head_dim", a.heads, hidden));
    }
    a.head_dim = hidden / a.heads;
  }
  if (a.kind == "mha") {
    a.kv_heads = f.optional_int("kv_heads").value_or(a.heads);
    if (a.kv_heads != a.heads) {
      throw Error(source, f.field("kv_heads"),
                  fmt::format("mha has as many key/value heads as heads ({}), got {}; use gqa",
                              a.heads, a.kv_heads));
    }
  } else {
    if (!f.has("kv_heads")) {
      throw Error(source, f.field("kv_heads"), "is required for gqa; expected a positive integer");
    }
    a.kv_heads = *f.optional_int("kv_heads");
    check_positive(f, "kv_heads", a.kv_heads);
    if (a.kv_heads > a.heads || a.heads % a.kv_heads != 0) {
      throw Error(source, f.field("kv_heads"),
                  fmt::format("must divide heads ({}), got {}", a.heads, a.kv_heads));
    }
  }
  return a;
}

}  // namespace

ModelSpec parse_model(const std::string& yaml_text, const std::string& source) {
  const YAML::Node root = parse_yaml(yaml_text, source);
  if (!root.IsMap()) {
    throw Error(source, "",
                fmt::format("expected a map of model fields (name, layers, hidden, ...), got {}",
                            describe(root)));
  }
  const Fields f(root, source, "", kModelFields);
  ModelSpec m;

  const auto name = f.optional_string("name");
  if (!name) throw Error(source, "name", "is required; expected the model's name");
  m.name = *name;
  if (m.name.empty() || std::any_of(m.name.begin(), m.name.end(), [](unsigned char c) {
        return std::isspace(c) || std::iscntrl(c);
      })) {
    throw Error(source, "name",
                fmt::format("expected a name without spaces (it is used on the command line), "
                            "got '{}'",
                            m.name));
  }
  m.description = f.optional_string("description").value_or("");

  m.layers = f.required_int("layers");
  check_positive(f, "layers", m.layers, 32767);  // task labels hold the layer in 16 bits
  m.hidden = f.required_int("hidden");
  check_positive(f, "hidden", m.hidden);
  m.attention = parse_attention(f.get("attention"), source, m.hidden);

  m.experts = f.required_int("experts");
  check_positive(f, "experts", m.experts);
  m.top_k = f.required_int("top_k");
  check_positive(f, "top_k", m.top_k);
  if (m.top_k > m.experts) {
    throw Error(source, "top_k",
                fmt::format("must be at most experts ({}), got {}", m.experts, m.top_k));
  }
  m.ffn_expert = f.required_int("ffn_expert");
  check_positive(f, "ffn_expert", m.ffn_expert);

  m.shared_experts = f.optional_int("shared_experts").value_or(0);
  check_non_negative(f, "shared_experts", m.shared_experts);
  m.ffn_shared = f.optional_int("ffn_shared").value_or(m.ffn_expert);
  check_positive(f, "ffn_shared", m.ffn_shared);

  m.dense_layers = f.optional_int("dense_layers").value_or(0);
  check_non_negative(f, "dense_layers", m.dense_layers);
  if (m.dense_layers >= m.layers) {
    throw Error(source, "dense_layers",
                fmt::format("must be less than layers ({}) so that some layers are MoE, got {}",
                            m.layers, m.dense_layers));
  }
  m.ffn_dense = f.optional_int("ffn_dense").value_or(0);
  check_non_negative(f, "ffn_dense", m.ffn_dense);
  if (m.dense_layers > 0 && m.ffn_dense == 0) {
    throw Error(source, "ffn_dense",
                fmt::format("is required (positive) when dense_layers is {}", m.dense_layers));
  }

  m.vocab = f.required_int("vocab");
  check_positive(f, "vocab", m.vocab);
  m.dtype_bytes = f.optional_int("dtype_bytes").value_or(2);
  if (m.dtype_bytes != 1 && m.dtype_bytes != 2 && m.dtype_bytes != 4) {
    throw Error(source, "dtype_bytes",
                fmt::format("expected 1 (fp8), 2 (bf16) or 4 (fp32), got {}", m.dtype_bytes));
  }
  m.gated_ffn = f.optional_bool("gated_ffn").value_or(true);

  if (f.has("aliases")) {
    const YAML::Node list = f.get("aliases");
    if (!list.IsSequence()) {
      throw Error(source, "aliases",
                  fmt::format("expected a list of names, got {}", describe(list)));
    }
    for (const YAML::Node& a : list) {
      if (!a.IsScalar() || a.Scalar().empty() ||
          a.Scalar().find_first_of(" \t\n") != std::string::npos) {
        throw Error(source, "aliases",
                    fmt::format("expected names without spaces, got {}", describe(a)));
      }
      m.aliases.push_back(a.Scalar());
    }
  }
  if (f.has("recipe")) m.recipe = detail::parse_recipe(f.get("recipe"), source, m);

  // Parameter counts are 64-bit integers; past 2^53 (9 quadrillion parameters) a model is a
  // typo, and rejecting it keeps every count exact and free of overflow (every partial sum is
  // below the total, so checking the total in floating point suffices).
  if (count_total<double>(m) > 9.0e15 || count_ffn<double>(m, m.ffn_dense) > 9.0e15) {
    throw Error(source, "", "model dimensions are implausibly large (over 9e15 parameters)");
  }
  return m;
}

namespace {

struct ZooEntry {
  std::string file;
  ModelSpec model;
};

// The embedded zoo, parsed once. A broken shipped file is reported on first use (and by the
// zoo tests), naming the file.
const std::vector<ZooEntry>& zoo() {
  static const std::vector<ZooEntry> entries = [] {
    std::vector<ZooEntry> out;
    for (int i = 0; i < detail::kModelZooSize; ++i) {
      const detail::EmbeddedYaml& e = detail::kModelZoo[i];
      out.push_back({e.file, parse_model(e.yaml, std::string("data/models/") + e.file)});
    }
    return out;
  }();
  return entries;
}

}  // namespace

std::vector<std::string> model_names() {
  std::vector<std::string> names;
  for (const ZooEntry& e : zoo())
    names.push_back(e.model.name);
  return names;
}

ModelSpec load_model(const std::string& name_or_path) {
  // Zoo names are matched case-insensitively ("Mixtral-8x7B" works); a zoo name wins over a
  // file of the same name in the working directory, which keeps a name's meaning stable.
  const std::string wanted = ascii_lower(name_or_path);
  for (const ZooEntry& e : zoo()) {
    if (ascii_lower(e.model.name) == wanted) return e.model;
    for (const std::string& alias : e.model.aliases) {
      // The same architecture under the name asked for, so that every output says that name.
      if (ascii_lower(alias) == wanted) {
        ModelSpec m = e.model;
        m.name = alias;
        return m;
      }
    }
  }
  if (names_a_yaml_file(name_or_path)) {
    return parse_model(
        read_yaml_file(name_or_path, "model file", "a model name or a YAML model file"),
        name_or_path);
  }
  // A typo's likely meaning among the names and their aliases ("mixtral-8x7": mixtral-8x7b).
  std::vector<std::string> known;
  for (const ZooEntry& e : zoo()) {
    known.push_back(ascii_lower(e.model.name));
    for (const std::string& alias : e.model.aliases)
      known.push_back(ascii_lower(alias));
  }
  const std::optional<std::string> near = closest_name(wanted, known);
  throw Error(
      fmt::format("unknown model {}{} (known: {}; or a .yaml file)", quote_input(name_or_path),
                  near ? fmt::format("; did you mean '{}'?", *near) : "", join(model_names())));
}

}  // namespace mfabric::workload
