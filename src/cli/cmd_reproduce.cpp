// `gpuemu reproduce SEED --op NAME`: regenerates one case from its seed, re-runs the op and the
// reference, and prints the same verdict with the worst elements. Exit 1 if it still fails.
#include <fmt/format.h>
#include <iostream>

#include "cli/command.hpp"
#include "cli/store_access.hpp"
#include "engine/op_session.hpp"
#include "engine/run_result.hpp"
#include "util/json_text.hpp"

namespace gpuemu::cli {
namespace {

std::string index_text(const std::vector<std::int64_t>& index) {
  std::string out;
  for (auto i : index) out += (out.empty() ? "" : ", ") + std::to_string(i);
  return "[" + out + "]";
}

void print_text(const engine::CaseRecord& r) {
  std::cout << fmt::format("{} seed {} op {}: {} {} {}\n", r.verdict.passed() ? "PASS" : "FAIL", r.seed, r.op,
                           tensor::dtype_name(r.params.dtype), tensor::layout_name(r.params.layout),
                           rng::distribution_name(r.params.distribution));
  for (const auto& [name, shape] : r.shapes) std::cout << "  input " << name << " " << tensor::shape_to_string(shape) << "\n";
  if (!r.dims.empty()) {
    std::string dims;
    for (const auto& [name, value] : r.dims) dims += (dims.empty() ? "" : ", ") + name + "=" + std::to_string(value);
    std::cout << "  dims " << dims << "\n";
  }
  std::cout << fmt::format("  tolerance atol {:g} rtol {:g}; max_abs {:.6g} max_rel {:.6g} max_ulp {:.6g}\n",
                           r.tolerance.atol, r.tolerance.rtol, r.verdict.stats.max_abs, r.verdict.stats.max_rel,
                           r.verdict.stats.max_ulp);
  if (!r.verdict.passed()) std::cout << "  " << check::failure_kind_name(r.verdict.kind) << ": " << r.verdict.message << "\n";
  if (!r.verdict.stats.worst.empty()) {
    std::cout << "  worst elements:\n";
    for (const auto& w : r.verdict.stats.worst) {
      std::cout << fmt::format("    {}{}  got {:.9g}  expected {:.9g}  abs {:.3g}  rel {:.3g}\n", w.output,
                               index_text(w.index), w.actual, w.expected, w.abs_err, w.rel_err);
    }
  }
  if (!r.stderr_tail.empty()) std::cout << "  stderr:\n" << r.stderr_tail << (r.stderr_tail.ends_with('\n') ? "" : "\n");
}

class ReproduceCommand final : public Command {
  void add_options(CLI::App& app) override {
    app.add_option("seed", seed_text_, "The case seed printed with the failure");
    app.add_option("--seed", seed_option_, "Same as the positional seed");
    app.add_option("--op", op_, "The op the case belongs to (needed when the seed is not in the store)");
  }

  Expected<ExitCode> run(Context& context) override {
    const config::Config& config = *TRY(context.config());
    const std::string text = !seed_text_.empty() ? seed_text_ : seed_option_;
    if (text.empty()) return fail(ErrorKind::usage, "reproduce needs a case seed: gpuemu reproduce SEED --op NAME");
    const std::uint64_t seed = TRY(parse_seed(text, "seed"));
    const auto resolved = TRY(resolve_case(context, seed, op_));
    engine::OpSession session(config, *resolved.op);
    const auto record = TRY(session.run_case(resolved.c));
    if (context.globals.format == "json") {
      nlohmann::json doc = engine::case_to_json(record);
      doc["passed"] = record.verdict.passed();
      doc["config_digest"] = config.digest;
      doc["from_snapshot"] = resolved.from_snapshot;
      std::cout << util::dump_json(doc) << "\n";
    } else {
      print_text(record);
    }
    return record.verdict.passed() ? ExitCode::ok : ExitCode::check_failed;
  }

  std::string seed_text_;
  std::string seed_option_;
  std::string op_;
};

}  // namespace

std::unique_ptr<Command> make_reproduce_command() { return std::make_unique<ReproduceCommand>(); }

}  // namespace gpuemu::cli
