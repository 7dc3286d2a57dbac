// Reading measured kernel times (kernel_measurements.h).
#include "workload/kernel_measurements.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <map>
#include <regex>
#include <sstream>

#include "core/error.h"
#include "core/input_files.h"
#include "core/output_text.h"
#include "core/yaml_fields.h"

namespace mfabric::workload {

namespace {

// CSV cells with RFC 4180 quotes (the reference files quote notes that hold commas).
std::vector<std::string> measurement_cells(const std::string& line) {
  std::vector<std::string> cells(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cells.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cells.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      cells.emplace_back();
    } else if (c != '\r') {
      cells.back() += c;
    }
  }
  return cells;
}

struct CsvRow {
  std::map<std::string, std::string> cells;
  std::string where;
};

// A row's cell by its column's name; a header that only begins like a known format's (a column
// misspelt, cut or padded) lacks it: mfabric::Error naming the column.
const std::string& cell(const CsvRow& row, const std::string& column) {
  const auto it = row.cells.find(column);
  if (it == row.cells.end()) {
    throw Error(row.where, column, "missing: the header has no column of that name");
  }
  return it->second;
}

class MeasurementCsv {
 public:
  explicit MeasurementCsv(const std::string& path) : path_(path) {
    std::istringstream in(read_text_file(path, "measurement file", "a CSV of kernel times"));
    std::string line;
    int line_no = 0;
    while (std::getline(in, line)) {
      ++line_no;
      if (line.empty() || line.front() == '#') continue;
      std::vector<std::string> cells = measurement_cells(line);
      if (header_.empty()) {
        header_ = cells;
        continue;
      }
      if (cells.size() != header_.size()) {
        throw Error(fmt::format("{}:{}", path, line_no), "",
                    fmt::format("expected {} columns ({}), got {}", header_.size(), join(header_),
                                cells.size()));
      }
      CsvRow row;
      row.where = fmt::format("{}:{}", path, line_no);
      for (std::size_t i = 0; i < cells.size(); ++i)
        row.cells[header_[i]] = cells[i];
      rows_.push_back(std::move(row));
    }
    if (header_.empty()) throw Error(path, "", "empty; expected a header line and rows");
  }

  std::string header() const { return join(header_); }
  const std::vector<CsvRow>& rows() const { return rows_; }

 private:
  std::string path_;
  std::vector<std::string> header_;
  std::vector<CsvRow> rows_;
};

double number_cell(const CsvRow& row, const std::string& column) {
  const std::string& text = cell(row, column);
  double v = 0;
  const auto [ptr, err] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (err != std::errc() || ptr != text.data() + text.size() || !std::isfinite(v)) {
    throw Error(row.where, column, fmt::format("expected a number, got {}", quote_input(text)));
  }
  return v;
}

std::int64_t count_cell(const CsvRow& row, const std::string& column) {
  const double v = number_cell(row, column);
  if (v < 0 || v != std::floor(v) || v >= 9e18) {
    throw Error(row.where, column, fmt::format("expected a whole count, got {}", v));
  }
  return static_cast<std::int64_t>(v);
}

Time ms_cell(const CsvRow& row, const std::string& column) {
  const double ms = number_cell(row, column);
  if (!(ms > 0)) {
    throw Error(row.where, column, fmt::format("expected a positive time in ms, got {}", ms));
  }
  return Time::from_seconds(ms * 1e-3);
}

// The integers after each prefix in a shape text such as "h4096 f14336 x1 (f/1)".
std::int64_t shape_field(const CsvRow& row, const std::string& shape, const std::string& prefix) {
  const std::regex re("(^|[ ])" + prefix + "([0-9]+)");
  std::smatch m;
  if (!std::regex_search(shape, m, re)) {
    throw Error(row.where, "shape",
                fmt::format("expected '{}N' in the shape {}", prefix, quote_input(shape)));
  }
  return std::stoll(m[2].str());
}

// "M x K x N" at the end of a GEMM's shape text.
std::array<std::int64_t, 3> gemm_dims(const CsvRow& row, const std::string& shape) {
  const std::regex re("([0-9]+)x([0-9]+)x([0-9]+)$");
  std::smatch m;
  if (!std::regex_search(shape, m, re)) {
    throw Error(row.where, "shape",
                fmt::format("expected a GEMM's 'MxKxN' in {}", quote_input(shape)));
  }
  return {std::stoll(m[1].str()), std::stoll(m[2].str()), std::stoll(m[3].str())};
}

// h200-moe-kernels.csv: op,model,shape,tokens,ms_fwd,ms_fwd_bwd,...
void read_moe_kernels(const MeasurementCsv& csv, KernelMeasurements& out) {
  for (const CsvRow& row : csv.rows()) {
    const std::string& op = cell(row, "op");
    const std::string& shape = cell(row, "shape");
    KernelMeasurement m;
    m.where = row.where;
    m.group = cell(row, "model") + " " + shape;
    m.forward = ms_cell(row, "ms_fwd");
    if (!cell(row, "ms_fwd_bwd").empty()) m.forward_backward = ms_cell(row, "ms_fwd_bwd");
    const std::int64_t tokens = count_cell(row, "tokens");
    KernelShape& s = m.shape;
    if (op == "expert_ffn") {
      s.op = KernelOp::Expert;
      s.hidden = shape_field(row, shape, "h");
      s.ffn = shape_field(row, shape, "f");
      s.local_experts = shape_field(row, shape, "x");
      if (s.local_experts < 1 || tokens % s.local_experts != 0) {
        throw Error(row.where, "tokens",
                    fmt::format("expected a multiple of the {} local experts, got {}",
                                s.local_experts, tokens));
      }
      s.tokens = tokens / s.local_experts;  // the column counts all local experts' tokens
    } else if (op == "expert_grouped") {
      out.skipped.push_back(row.where +
                            ": one grouped-GEMM launch; the model times the per-expert loop, "
                            "measured beside it");
      continue;
    } else if (op == "attention") {
      s.op = KernelOp::Attention;
      s.heads = shape_field(row, shape, "H");
      s.kv_heads = shape_field(row, shape, "KV");
      s.qk_head_dim = s.v_head_dim = shape_field(row, shape, "d");
      s.seq = shape_field(row, shape, "S");
      s.batch = shape_field(row, shape, "b");
      s.causal = true;
    } else if (op == "dense") {
      s.op = KernelOp::Dense;
      const std::regex re("^([0-9]+)x([0-9]+)$");
      std::smatch mm;
      if (!std::regex_match(shape, mm, re)) {
        throw Error(row.where, "shape",
                    fmt::format("expected a dense GEMM's 'INxOUT', got {}", quote_input(shape)));
      }
      s.hidden = std::stoll(mm[1].str());
      s.ffn = std::stoll(mm[2].str());
      s.tokens = tokens;
    } else if (op == "gemm_peak") {
      s.op = KernelOp::Dense;  // an M = K = N square GEMM
      s.hidden = s.ffn = s.tokens = tokens;
      // The same shape as the FP8 file's "square NxNxN" bf16 row: one shape, measured twice.
      m.group = fmt::format("square {0}x{0}x{0}", tokens);
    } else if (op == "hbm_copy") {
      s.op = KernelOp::Elementwise;
      Bytes size;
      try {
        size = parse_bytes(shape);
      } catch (const Error& e) {
        throw Error(row.where, "shape", e.message());
      }
      s.bytes = 2 * static_cast<double>(size.count());  // read and written
    } else {
      throw Error(row.where, "op",
                  fmt::format("unknown op {} (known: expert_ffn, expert_grouped, attention, "
                              "dense, gemm_peak, hbm_copy)",
                              quote_input(op)));
    }
    out.rows.push_back(std::move(m));
  }
}

// h200-permute.csv: op,h,f,local,tokens_per_expert,ms_fwd,... where tokens_per_expert holds the
// routed copies T x k and local the experts; the time depends on T x k only, so one token
// routed once per copy stands for them.
void read_permute(const MeasurementCsv& csv, KernelMeasurements& out) {
  for (const CsvRow& row : csv.rows()) {
    if (cell(row, "op") != "permute") {
      throw Error(row.where, "op",
                  fmt::format("expected permute, got {}", quote_input(cell(row, "op"))));
    }
    KernelMeasurement m;
    m.where = row.where;
    m.shape.op = KernelOp::Permute;
    m.shape.hidden = count_cell(row, "h");
    m.shape.experts = count_cell(row, "local");
    m.shape.tokens = count_cell(row, "tokens_per_expert");
    m.shape.top_k = 1;
    m.group = fmt::format("permute h{}", m.shape.hidden);
    m.forward = ms_cell(row, "ms_fwd");
    out.rows.push_back(std::move(m));
  }
}

// h200-fp8-optimizer-mla.csv: op,shape,ms,tflops_or_gbps,note. The MLA attention's forward and
// forward+backward rows of one shape become one measurement.
void read_fp8_optimizer_mla(const MeasurementCsv& csv, KernelMeasurements& out) {
  std::map<std::string, std::size_t> mla;  // shape -> index in out.rows
  for (const CsvRow& row : csv.rows()) {
    const std::string& op = cell(row, "op");
    const std::string& shape = cell(row, "shape");
    const Time ms = ms_cell(row, "ms");
    KernelMeasurement m;
    m.where = row.where;
    if (op == "bf16" || op == "fp8") {
      const auto [rows, in, outs] = gemm_dims(row, shape);
      m.shape.op = op == "fp8" ? KernelOp::DenseFp8 : KernelOp::Dense;
      m.shape.tokens = rows;
      m.shape.hidden = in;
      m.shape.ffn = outs;
      m.group = shape;
      m.forward = ms;
    } else if (op == "adam_fused") {
      m.shape.op = KernelOp::Optimizer;
      // "1e9 fp32 params": 7 fp32 touches per parameter (the note): read weight, gradient and
      // both moments, write weight and moments.
      m.shape.params = static_cast<std::int64_t>(std::stod(shape));
      m.shape.bytes_per_param = 28;
      m.group = "adam " + shape;
      m.forward = ms;
    } else if (op == "mla_attn_fwd" || op == "mla_attn_fwd_bwd") {
      const auto [it, inserted] = mla.emplace(shape, out.rows.size());
      if (!inserted) {
        KernelMeasurement& known = out.rows[it->second];
        (op == "mla_attn_fwd" ? known.forward : known.forward_backward.emplace()) = ms;
        if (op == "mla_attn_fwd") known.where = row.where;
        continue;
      }
      KernelShape& s = m.shape;
      s.op = KernelOp::Attention;
      s.heads = s.kv_heads = shape_field(row, shape, "H");
      s.seq = shape_field(row, shape, "S");
      s.qk_head_dim = shape_field(row, shape, "dqk");
      s.v_head_dim = shape_field(row, shape, "dv");
      s.batch = 1;
      m.group = "mla " + shape;
      (op == "mla_attn_fwd" ? m.forward : m.forward_backward.emplace()) = ms;
    } else {
      throw Error(row.where, "op",
                  fmt::format("unknown op {} (known: bf16, fp8, adam_fused, mla_attn_fwd, "
                              "mla_attn_fwd_bwd)",
                              quote_input(op)));
    }
    out.rows.push_back(std::move(m));
  }
  for (const auto& [shape, index] : mla) {
    if (out.rows[index].forward == Time::zero()) {
      throw Error(out.rows[index].where, "op",
                  fmt::format("MLA shape {} has a forward+backward row but no forward row",
                              quote_input(shape)));
    }
  }
}

}  // namespace

namespace {

// A calibration file's `kernels.measurements` (what scripts/measure-gpu.py writes).
KernelMeasurements read_calibration_measurements(const std::string& path) {
  const YAML::Node root = parse_yaml(
      read_yaml_file(path, "calibration file", "a calibration file with kernels.measurements"),
      path);
  const YAML::Node kernels = root.IsMap() ? root["kernels"] : YAML::Node();
  if (!kernels || !kernels.IsMap() || !kernels["measurements"]) {
    throw Error(path, "kernels.measurements",
                "expected a calibration with a kernels.measurements list (what "
                "scripts/measure-gpu.py writes) or a measurement CSV");
  }
  return {parse_kernel_measurements(kernels["measurements"], path, "kernels.measurements"), {}};
}

}  // namespace

KernelMeasurements read_kernel_measurements(const std::string& path) {
  if (has_yaml_extension(path)) return read_calibration_measurements(path);
  const MeasurementCsv csv(path);
  KernelMeasurements out;
  const std::string header = csv.header();
  if (header.rfind("op, model, shape, tokens, ms_fwd, ms_fwd_bwd", 0) == 0) {
    read_moe_kernels(csv, out);
  } else if (header.rfind("op, h, f, local, tokens_per_expert, ms_fwd", 0) == 0) {
    read_permute(csv, out);
  } else if (header.rfind("op, shape, ms", 0) == 0) {
    read_fp8_optimizer_mla(csv, out);
  } else {
    throw Error(path, "",
                fmt::format("unknown measurement format (header {}); expected the header of "
                            "one of data/measurements/*.csv",
                            quote_input(header)));
  }
  return out;
}

const std::vector<std::string>& kernel_shape_fields(KernelOp op) {
  static const std::map<KernelOp, std::vector<std::string>> fields = {
      {KernelOp::Expert, {"hidden", "ffn", "local_experts", "tokens", "gated"}},
      {KernelOp::Dense, {"in", "out", "tokens"}},
      {KernelOp::DenseFp8, {"in", "out", "tokens"}},
      {KernelOp::Attention,
       {"heads", "kv_heads", "head_dim", "v_head_dim", "seq", "batch", "causal"}},
      {KernelOp::Permute, {"hidden", "tokens", "top_k", "experts"}},
      {KernelOp::Optimizer, {"params", "bytes_per_param"}},
      {KernelOp::Elementwise, {"bytes"}},
  };
  return fields.at(op);
}

std::vector<KernelMeasurement> parse_kernel_measurements(const YAML::Node& list,
                                                         const std::string& source,
                                                         const std::string& path) {
  if (!list.IsSequence()) {
    throw Error(source, path,
                fmt::format("expected a list of measurements, got {}", describe(list)));
  }
  if (list.size() > kMaxKernelMeasurements) {
    throw Error(source, path,
                fmt::format("expected at most {} measurements, got {}", kMaxKernelMeasurements,
                            list.size()));
  }
  std::vector<KernelMeasurement> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string at = fmt::format("{}[{}]", path, i);
    const YAML::Node& node = list[i];
    if (!node.IsMap() || !node["op"] || !node["op"].IsScalar()) {
      throw Error(source, at, "expected a map with an op (expert, dense, attention, ...)");
    }
    const KernelOp op =
        with_context(source, at + ".op", [&] { return parse_kernel_op(node["op"].Scalar()); });
    std::vector<std::string> known = {"op", "group", "forward", "forward_backward"};
    for (const std::string& f : kernel_shape_fields(op))
      known.push_back(f);
    const Fields f(node, source, at, known);
    KernelMeasurement m;
    m.where = fmt::format("{}: {}", source, at);
    KernelShape& s = m.shape;
    s.op = op;
    const auto count = [&f](const std::string& key, std::int64_t fallback) -> std::int64_t {
      if (!f.has(key)) return fallback;
      const std::optional<std::uint64_t> v = f.optional_uint64(key);
      if (!v || *v < 1 || *v >= (std::uint64_t{1} << 62)) {
        throw Error(f.source(), f.field(key), "expected a positive integer");
      }
      return static_cast<std::int64_t>(*v);
    };
    s.hidden = count(op == KernelOp::Dense || op == KernelOp::DenseFp8 ? "in" : "hidden", 0);
    s.ffn = count(op == KernelOp::Dense || op == KernelOp::DenseFp8 ? "out" : "ffn", 0);
    s.local_experts = count("local_experts", 1);
    s.tokens = count("tokens", 0);
    s.gated = f.optional_bool("gated").value_or(true);
    s.heads = count("heads", 0);
    s.kv_heads = count("kv_heads", s.heads);
    s.qk_head_dim = count("head_dim", 0);
    s.v_head_dim = count("v_head_dim", s.qk_head_dim);
    s.seq = count("seq", 0);
    s.batch = count("batch", 1);
    s.causal = f.optional_bool("causal").value_or(true);
    s.top_k = count("top_k", 0);
    s.experts = count("experts", 0);
    s.params = count("params", 0);
    s.bytes_per_param = f.optional_double("bytes_per_param").value_or(kOptimizerBytesPerParam);
    if (f.has("bytes")) s.bytes = static_cast<double>(f.optional_bytes("bytes")->count());
    with_context(source, at, [&] { return kernel_work(s); });  // the shape is whole
    // Without a group, rows of the same op and table dim are one shape.
    m.group = f.optional_string("group").value_or(
        fmt::format("{} {:g}", to_string(op), kernel_work(s).dim));
    const std::optional<Time> fwd = f.optional_time("forward");
    if (!fwd || *fwd <= Time::zero()) {
      throw Error(source, f.field("forward"), "expected a positive time such as '1.2ms'");
    }
    m.forward = *fwd;
    if (f.has("forward_backward")) {
      const std::optional<Time> fb = f.optional_time("forward_backward");
      if (!fb || *fb <= m.forward) {
        throw Error(source, f.field("forward_backward"),
                    "expected a time longer than the forward's");
      }
      m.forward_backward = *fb;
    }
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace mfabric::workload
