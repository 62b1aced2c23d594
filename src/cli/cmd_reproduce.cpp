// `gpuemu reproduce SEED --op NAME`: regenerates one case from its seed, re-runs the op and the
// reference, and prints the same verdict with the worst elements. Exit 1 if it still fails.
#include <fmt/format.h>
#include <iostream>

#include "cli/command.hpp"
#include "cli/daemon_access.hpp"
#include "cli/seed_options.hpp"
#include "cli/store_access.hpp"
#include "engine/op_session.hpp"
#include "result/case_reader.hpp"
#include "result/run_result.hpp"
#include "util/json_text.hpp"

namespace gpuemu::cli {

namespace {

std::string index_text(const std::vector<std::int64_t>& index) {
  std::string out;
  for (auto i : index) out += (out.empty() ? "" : ", ") + std::to_string(i);
  return "[" + out + "]";
}

// Prints a case record (result::case_to_json, the same document in-process and from the daemon).
void print_text(const result::FailureEntry& r) {
  const bool passed = r.kind == "none";
  std::cout << fmt::format("{} seed {} op {}: {} {} {}\n", passed ? "PASS" : "FAIL", r.seed, r.op, r.dtype,
                           r.layout, r.distribution);
  for (const auto& [name, shape] : r.shapes) {
    std::cout << "  input " << name << " " << tensor::shape_to_string(shape) << "\n";
  }
  if (!r.dims.empty()) {
    std::string dims;
    for (const auto& [name, value] : r.dims)
      dims += (dims.empty() ? "" : ", ") + name + "=" + std::to_string(value);
    std::cout << "  dims " << dims << "\n";
  }
  std::cout << fmt::format("  tolerance atol {:g} rtol {:g}; max_abs {:.6g} max_rel {:.6g} max_ulp {:.6g}\n",
                           r.atol, r.rtol, r.figures.max_abs, r.figures.max_rel, r.figures.max_ulp);
  if (!passed) std::cout << "  " << r.kind << ": " << r.message << "\n";
  if (!r.worst.empty()) {
    std::cout << "  worst elements:\n";
    for (const auto& w : r.worst) {
      std::cout << fmt::format("    {}{}  got {:.9g}  expected {:.9g}  abs {:.3g}  rel {:.3g}\n", w.output,
                               index_text(w.index), w.actual, w.expected, w.abs_err, w.rel_err);
    }
  }
  if (!r.stderr_text.empty())
    std::cout << "  stderr:\n" << r.stderr_text << (r.stderr_text.ends_with('\n') ? "" : "\n");
}

class ReproduceCommand final : public Command {
  void add_options(CLI::App& app) override {
    seed_.add_to(app, "The case seed printed with the failure");
    app.add_option("--op", op_, "The op the case belongs to (needed when the seed is not in the store)");
  }

  Expected<ExitCode> run(Context& context) override {
    // A variant's case ("softmax[BLOCK=64,num_warps=4]") replays with the config it failed with.
    if (!context.globals.daemon)
      TRY(context.expand_autotune(op_.empty() ? std::vector<std::string>{} : std::vector{op_}));
    const config::Config& config = *TRY(context.config());
    const std::uint64_t seed =
        TRY(seed_.value("reproduce needs a case seed: gpuemu reproduce SEED --op NAME"));
    if (context.globals.daemon) return reproduce_in_daemon(context, seed);
    const auto resolved = TRY(resolve_loadable_case(context, seed, op_));
    engine::OpSession session(config, *resolved.op);
    const auto record = TRY(session.run_case(resolved.c));
    nlohmann::json doc = result::case_to_json(record);
    doc["passed"] = record.verdict.passed();
    return print_result(context, std::move(doc), config.digest, resolved.from_snapshot);
  }

  static Expected<ExitCode> print_result(Context& context, nlohmann::json doc, const std::string& digest,
                                         bool from_snapshot) {
    const auto record = TRY(result::case_from_json(doc, "the case record"));
    if (context.globals.format == "json") {
      doc["config_digest"] = digest;
      doc["from_snapshot"] = from_snapshot;
      std::cout << util::dump_json(doc) << "\n";
    } else {
      print_text(record);
    }
    return record.kind == "none" ? ExitCode::ok : ExitCode::check_failed;
  }

  // --daemon: the daemon re-runs the case (docs/protocol.md "reproduce"); the output is the same.
  Expected<ExitCode> reproduce_in_daemon(Context& context, std::uint64_t seed) {
    const config::Config& config = *TRY(context.config());
    nlohmann::json request = {{"type", "reproduce"}, {"seed", std::to_string(seed)}};
    if (!op_.empty()) request["op"] = op_;
    const auto reply = TRY(daemon_request(context, std::move(request)));
    if (reply.header.value("needs_client", false)) {
      return fail(ErrorKind::usage,
                  fmt::format("seed {} belongs to an op that runs on the client (no op_script); "
                              "reproduce it from the Python client",
                              seed));
    }
    nlohmann::json doc = reply.header.at("result");
    // Only the case_to_json fields, so the document equals the in-process one.
    for (const char* extra : {"timestamp", "duration_ms", "stored", "failure_id"}) doc.erase(extra);
    return print_result(context, std::move(doc), config.digest, reply.header.value("from_snapshot", false));
  }

  CaseSeedOption seed_;
  std::string op_;
};

}  // namespace

std::unique_ptr<Command> make_reproduce_command() {
  return std::make_unique<ReproduceCommand>();
}

}  // namespace gpuemu::cli
