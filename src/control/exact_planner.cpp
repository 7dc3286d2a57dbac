// The "exact" planner (docs/control-plane.md): the min-max integer program solved with GLPK, for
// small regions. It reaches the same optimum as "optimal" by a different route and is kept as
// the independent check of it (tests/control/planner_test.cpp).
//
// Variables: x[p][c] = 1 when pair p gets c circuits (c = 0..alpha), and T. Minimise T subject to
//   sum_c x[p][c] = 1                          for every pair p with demand,
//   sum_{p at s} sum_c c x[p][c] <= ports_s    for every server s (its working ports: alpha
//                                              without failures),
//   T - sum_c finish(p, c) x[p][c] >= 0        for every pair p,
// with finish(p, c) = pair_finish(bytes_p, c) divided by the largest of them (well-scaled rows).
#include <glpk.h>

#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "control/planner_impl.h"
#include "core/error.h"

namespace mfabric::control::detail {
namespace {

struct ProblemDeleter {
  void operator()(glp_prob* p) const { glp_delete_prob(p); }
};

class ExactPlanner final : public Planner {
 public:
  std::string name() const override { return "exact"; }

  CircuitPlan plan(const ServerDemand& demand, const PlanLimits& limits) const override {
    limits.validate(demand.servers());
    if (demand.servers() > kMaxExactServers) {
      throw Error("", "algorithm",
                  fmt::format("the exact planner solves an integer program and takes regions of "
                              "at most {} servers, this one has {}; use 'optimal', which reaches "
                              "the same optimum at any size",
                              kMaxExactServers, demand.servers()));
    }
    Allocation allocation(demand, limits);
    const std::vector<DemandPair>& pairs = allocation.pairs();
    if (pairs.empty()) return allocation.to_plan();
    const int options = limits.alpha + 1;  // circuit counts 0..alpha

    double scale = 0.0;
    for (const DemandPair& p : pairs)
      scale = std::max(scale, pair_finish(p.bytes, 0, limits));
    for (const DemandPair& p : pairs)
      scale = std::max(scale, pair_finish(p.bytes, 1, limits));

    glp_term_out(GLP_OFF);
    std::unique_ptr<glp_prob, ProblemDeleter> lp(glp_create_prob());
    glp_set_obj_dir(lp.get(), GLP_MIN);
    const int pair_count = static_cast<int>(pairs.size());
    // Columns: x[p][c] at 1 + p * options + c, then T.
    const int x_columns = pair_count * options;
    glp_add_cols(lp.get(), x_columns + 1);
    for (int k = 1; k <= x_columns; ++k)
      glp_set_col_kind(lp.get(), k, GLP_BV);
    const int t_column = x_columns + 1;
    glp_set_col_bnds(lp.get(), t_column, GLP_LO, 0.0, 0.0);
    glp_set_obj_coef(lp.get(), t_column, 1.0);

    // Rows: one choice per pair, one port budget per server, one bound on T per pair.
    const int servers = demand.servers();
    glp_add_rows(lp.get(), pair_count + servers + pair_count);
    std::vector<int> rows{0};
    std::vector<int> cols{0};
    std::vector<double> values{0.0};
    const auto put = [&](int row, int col, double value) {
      rows.push_back(row);
      cols.push_back(col);
      values.push_back(value);
    };
    for (int p = 0; p < pair_count; ++p) {
      const int choice_row = 1 + p;
      const int bound_row = 1 + pair_count + servers + p;
      glp_set_row_bnds(lp.get(), choice_row, GLP_FX, 1.0, 1.0);
      glp_set_row_bnds(lp.get(), bound_row, GLP_LO, 0.0, 0.0);
      put(bound_row, t_column, 1.0);
      const DemandPair& pair = pairs[static_cast<std::size_t>(p)];
      for (int c = 0; c < options; ++c) {
        const int col = 1 + p * options + c;
        put(choice_row, col, 1.0);
        put(bound_row, col, -pair_finish(pair.bytes, c, limits) / scale);
        if (c > 0) {
          put(1 + pair_count + pair.i, col, c);
          put(1 + pair_count + pair.j, col, c);
        }
      }
    }
    for (int s = 0; s < servers; ++s) {
      glp_set_row_bnds(lp.get(), 1 + pair_count + s, GLP_UP, 0.0, limits.ports_of(s));
    }
    glp_load_matrix(lp.get(), static_cast<int>(rows.size()) - 1, rows.data(), cols.data(),
                    values.data());

    glp_iocp params;
    glp_init_iocp(&params);
    params.presolve = GLP_ON;
    params.msg_lev = GLP_MSG_OFF;
    const int status = glp_intopt(lp.get(), &params);
    if (status != 0 || glp_mip_status(lp.get()) != GLP_OPT) {
      throw Error("", "algorithm",
                  fmt::format("the exact planner's integer program found no optimum (GLPK "
                              "status {}, {})",
                              status, glp_mip_status(lp.get())));
    }
    for (int p = 0; p < pair_count; ++p) {
      for (int c = 1; c < options; ++c) {
        if (glp_mip_col_val(lp.get(), 1 + p * options + c) > 0.5) {
          for (int k = 0; k < c; ++k)
            allocation.add(static_cast<std::size_t>(p));
        }
      }
    }
    // As "optimal": the max is settled; the ports left serve the other pairs.
    run_greedy(allocation, limits, GreedyKey::Objective, /*stop_at_first_blocked=*/false);
    return allocation.to_plan();
  }
};

}  // namespace

std::unique_ptr<Planner> make_exact_planner() {
  return std::make_unique<ExactPlanner>();
}

}  // namespace mfabric::control::detail
