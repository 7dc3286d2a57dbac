// mfabric kernel: what the compute model believes one op of a given shape takes on a GPU
// (expert, dense, attention, permute), and the measured tables behind it (fit, check).
// docs/calibration.md, "Measured kernels".
#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/kernel_command.h"
#include "core/json_text.h"
#include "core/output_files.h"
#include "report/table.h"
#include "workload/calibration.h"
#include "workload/kernel_fit.h"
#include "workload/kernel_model.h"
#include "workload/kernel_tables_yaml.h"

namespace mfabric::cli {
namespace {

// Rows beyond 2^31 are refused (kernel_model.h).
constexpr std::int64_t kMaxKernelRows = (std::int64_t{1} << 31) - 1;

struct KernelOptions {
  std::string gpu = "H200";
  std::string calibration;  // empty: the GPU's shipped calibration, else roofline
  bool json = false;
  workload::KernelShape shape;
  std::string precision = "bf16";
};

const CLI::Validator& known_gpu() {
  static const CLI::Validator v(
      [](std::string& name) {
        try {
          (void)workload::find_gpu(name);
          return std::string();
        } catch (const Error& e) {
          return e.message();
        }
      },
      "GPU", "");
  return v;
}

void add_common(CLI::App* app, KernelOptions& o) {
  std::string gpus;
  for (const workload::GpuSpec& g : workload::gpu_catalogue())
    gpus += (gpus.empty() ? "" : ", ") + g.name;
  app->add_option("--gpu", o.gpu, "GPU of the catalogue (" + gpus + ")")
      ->check(known_gpu())
      ->capture_default_str();
  app->add_option("--calibration", o.calibration,
                  "Calibration name or file (default: the GPU's measured one where shipped, else "
                  "roofline)");
  app->add_flag("--json", o.json, "Print JSON");
}

CLI::Option* size_option(CLI::App* app, const std::string& name, std::int64_t& value,
                         const std::string& help, bool required = true) {
  CLI::Option* opt =
      app->add_option(name, value, help)->check(CLI::Range(std::int64_t{1}, kMaxKernelRows));
  if (required) opt->required();
  return opt;
}

int print_time(const KernelOptions& o) {
  const std::string name =
      !o.calibration.empty()
          ? o.calibration
          : workload::calibration_for_gpu(o.gpu).value_or(std::string("roofline"));
  const workload::Calibration c = workload::load_calibration(name);
  const workload::GpuSpec& gpu = workload::find_gpu(o.gpu);
  const workload::KernelModel model(gpu, c.kernels.get(), c.compute);
  const workload::KernelTime t = model.time(o.shape);
  if (o.json) {
    nlohmann::json j = {{"forward_s", t.forward.seconds()},
                        {"backward_s", t.backward.seconds()},
                        {"forward_backward_s", t.total().seconds()},
                        {"efficiency_forward", t.efficiency_forward},
                        {"efficiency_backward", t.efficiency_backward},
                        {"op", std::string(workload::to_string(o.shape.op))},
                        {"gpu", gpu.name},
                        {"calibration", c.name},
                        {"measured", t.measured}};
    std::cout << json_text(j) << "\n";
    return 0;
  }
  std::cout << fmt::format("{} on {} ({} calibration, {}):\n", workload::to_string(o.shape.op),
                           gpu.name, c.name, t.measured ? "measured table" : "roofline");
  std::cout << fmt::format("  forward           {:>12}  at {:.3f} of peak\n",
                           seconds_text(t.forward.seconds()), t.efficiency_forward);
  std::cout << fmt::format("  backward          {:>12}  at {:.3f} of peak\n",
                           seconds_text(t.backward.seconds()), t.efficiency_backward);
  std::cout << fmt::format("  forward+backward  {:>12}\n", seconds_text(t.total().seconds()));
  // The table's efficiency is the work's; launches and the memory floor come on top of it.
  const workload::KernelWork w = workload::kernel_work(o.shape);
  const double all = (w.forward + w.backward) / model.peak(o.shape.op);
  if (t.total() > Time::zero()) {
    std::cout << fmt::format("  overall {:.3f} of peak, {} launch{} per phase\n",
                             all / t.total().seconds(), w.launches, w.launches == 1 ? "" : "es");
  }
  return 0;
}

void register_expert(CLI::App& parent, std::vector<std::function<int()>>& runs,
                     std::shared_ptr<KernelOptions> o) {
  CLI::App* app = parent.add_subcommand("expert", "A loop of L gated expert FFNs on one GPU");
  add_common(app, *o);
  o->shape.op = workload::KernelOp::Expert;
  size_option(app, "--hidden", o->shape.hidden, "Hidden size h");
  size_option(app, "--ffn", o->shape.ffn, "FFN width of one expert on this GPU (f / expert TP)");
  size_option(app, "--local-experts", o->shape.local_experts, "Experts on this GPU", false)
      ->capture_default_str();
  size_option(app, "--tokens-per-expert", o->shape.tokens, "Tokens each expert computes");
  runs.push_back([app, o] { return app->parsed() ? print_time(*o) : -1; });
}

void register_dense(CLI::App& parent, std::vector<std::function<int()>>& runs,
                    std::shared_ptr<KernelOptions> o) {
  CLI::App* app = parent.add_subcommand("dense", "One GEMM: tokens x in times in x out");
  add_common(app, *o);
  size_option(app, "--in", o->shape.hidden, "Input features");
  size_option(app, "--out", o->shape.ffn, "Output features");
  size_option(app, "--tokens", o->shape.tokens, "Rows (tokens)");
  app->add_option("--precision", o->precision, "bf16 or fp8 (e4m3 inputs)")
      ->check(CLI::IsMember({"bf16", "fp8"}))
      ->capture_default_str();
  runs.push_back([app, o] {
    if (!app->parsed()) return -1;
    o->shape.op = o->precision == "fp8" ? workload::KernelOp::DenseFp8 : workload::KernelOp::Dense;
    return print_time(*o);
  });
}

void register_attention(CLI::App& parent, std::vector<std::function<int()>>& runs,
                        std::shared_ptr<KernelOptions> o) {
  CLI::App* app =
      parent.add_subcommand("attention", "The attention core (flash kernels) on one TP rank");
  add_common(app, *o);
  o->shape.op = workload::KernelOp::Attention;
  o->shape.causal = false;
  size_option(app, "--heads", o->shape.heads, "Query heads on this GPU");
  size_option(app, "--kv-heads", o->shape.kv_heads, "Key/value heads (default: --heads)", false);
  size_option(app, "--head-dim", o->shape.qk_head_dim, "Query/key head dimension");
  size_option(app, "--v-head-dim", o->shape.v_head_dim,
              "Value head dimension (default: --head-dim)", false);
  size_option(app, "--seq", o->shape.seq, "Sequence length");
  o->shape.batch = 1;
  size_option(app, "--batch", o->shape.batch, "Sequences", false)->capture_default_str();
  app->add_flag("--causal", o->shape.causal, "Causal mask (half the score matrix)");
  runs.push_back([app, o] {
    if (!app->parsed()) return -1;
    if (o->shape.kv_heads == 0) o->shape.kv_heads = o->shape.heads;
    if (o->shape.v_head_dim == 0) o->shape.v_head_dim = o->shape.qk_head_dim;
    return with_option_names([&] { return print_time(*o); });
  });
}

void register_permute(CLI::App& parent, std::vector<std::function<int()>>& runs,
                      std::shared_ptr<KernelOptions> o) {
  CLI::App* app = parent.add_subcommand(
      "permute", "The MoE dispatch/combine permutation: top-k, sort, gather, scatter back");
  add_common(app, *o);
  o->shape.op = workload::KernelOp::Permute;
  size_option(app, "--hidden", o->shape.hidden, "Hidden size h");
  size_option(app, "--tokens", o->shape.tokens, "Tokens before routing");
  size_option(app, "--top-k", o->shape.top_k, "Experts per token");
  size_option(app, "--experts", o->shape.experts, "Experts routed over");
  runs.push_back(
      [app, o] { return app->parsed() ? with_option_names([&] { return print_time(*o); }) : -1; });
}

}  // namespace

Command register_kernel(CLI::App& command) {
  CLI::App* app = &command;
  app->require_subcommand(1);
  auto runs = std::make_shared<std::vector<std::function<int()>>>();
  register_expert(*app, *runs, std::make_shared<KernelOptions>());
  register_dense(*app, *runs, std::make_shared<KernelOptions>());
  register_attention(*app, *runs, std::make_shared<KernelOptions>());
  register_permute(*app, *runs, std::make_shared<KernelOptions>());
  register_kernel_tables(*app, *runs);
  return Command{app, [runs] {
                   // Bad input to a kernel question is bad usage: one line, exit 2.
                   try {
                     for (const auto& run : *runs) {
                       const int rc = run();
                       if (rc >= 0) return rc;
                     }
                   } catch (const Error& e) {
                     std::cerr << "mfabric: error: " << e.what() << "\n";
                     return 2;
                   }
                   return 2;
                 }};
}

}  // namespace mfabric::cli
