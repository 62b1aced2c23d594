// `gpuemu reproduce SEED --op NAME`: regenerates one case from its seed, re-runs the op and the
// reference, and prints the same verdict with the worst elements. Exit 1 if it still fails.
#include <fmt/format.h>
#include <iostream>

#include <cmath>

#include "cli/command.hpp"
#include "cli/daemon_access.hpp"
#include "cli/store_access.hpp"
#include "engine/load_ops.hpp"
#include "engine/op_session.hpp"
#include "result/run_result.hpp"
#include "util/json_text.hpp"
#include "util/result_keys.hpp"

namespace gpuemu::cli {

namespace keys = util::result_keys;
namespace {

std::string index_text(const std::vector<std::int64_t>& index) {
  std::string out;
  for (auto i : index) out += (out.empty() ? "" : ", ") + std::to_string(i);
  return "[" + out + "]";
}

double number(const nlohmann::json& value) {
  return daemon::wire_float(value).value_or(std::nan(""));
}

// Prints a case record (result::case_to_json, the same document in-process and from the daemon).
void print_text(const nlohmann::json& r) {
  const bool passed = r.value("passed", false);
  std::cout << fmt::format("{} seed {} op {}: {} {} {}\n", passed ? "PASS" : "FAIL", r.value("seed", ""),
                           r.value("op", ""), r.value("dtype", ""), r.value("layout", ""),
                           r.value("distribution", ""));
  for (const auto& [name, shape] : r.at("shapes").items()) {
    std::cout << "  input " << name << " " << tensor::shape_to_string(shape.get<tensor::Shape>()) << "\n";
  }
  if (!r.at("dims").empty()) {
    std::string dims;
    for (const auto& [name, value] : r.at("dims").items()) {
      dims += (dims.empty() ? "" : ", ") + name + "=" + std::to_string(value.get<std::int64_t>());
    }
    std::cout << "  dims " << dims << "\n";
  }
  std::cout << fmt::format("  tolerance atol {:g} rtol {:g}; max_abs {:.6g} max_rel {:.6g} max_ulp {:.6g}\n",
                           number(r.at(keys::kAtol)), number(r.at(keys::kRtol)), number(r.at(keys::kMaxAbs)),
                           number(r.at(keys::kMaxRel)), number(r.at(keys::kMaxUlp)));
  if (!passed) std::cout << "  " << r.value("kind", "") << ": " << r.value("message", "") << "\n";
  if (!r.at("worst").empty()) {
    std::cout << "  worst elements:\n";
    for (const auto& w : r.at("worst")) {
      std::cout << fmt::format(
          "    {}{}  got {:.9g}  expected {:.9g}  abs {:.3g}  rel {:.3g}\n", w.value("output", ""),
          index_text(w.at("index").get<std::vector<std::int64_t>>()), number(w.at("actual")),
          number(w.at("expected")), number(w.at("abs_err")), number(w.at("rel_err")));
    }
  }
  const std::string tail = r.value("stderr", "");
  if (!tail.empty()) std::cout << "  stderr:\n" << tail << (tail.ends_with('\n') ? "" : "\n");
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
    if (text.empty())
      return fail(ErrorKind::usage, "reproduce needs a case seed: gpuemu reproduce SEED --op NAME");
    const std::uint64_t seed = TRY(parse_seed(text, "seed"));
    if (context.globals.daemon) return reproduce_in_daemon(context, seed);
    const auto resolved = TRY(resolve_case(context, seed, op_));
    TRY(engine::check_op_loads(config, {resolved.op}));
    engine::OpSession session(config, *resolved.op);
    const auto record = TRY(session.run_case(resolved.c));
    nlohmann::json doc = result::case_to_json(record);
    doc["passed"] = record.verdict.passed();
    return print_result(context, std::move(doc), config.digest, resolved.from_snapshot);
  }

  static Expected<ExitCode> print_result(Context& context, nlohmann::json doc, const std::string& digest,
                                         bool from_snapshot) {
    if (context.globals.format == "json") {
      doc["config_digest"] = digest;
      doc["from_snapshot"] = from_snapshot;
      std::cout << util::dump_json(doc) << "\n";
    } else {
      print_text(doc);
    }
    return doc.value("passed", false) ? ExitCode::ok : ExitCode::check_failed;
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

  std::string seed_text_;
  std::string seed_option_;
  std::string op_;
};

}  // namespace

std::unique_ptr<Command> make_reproduce_command() {
  return std::make_unique<ReproduceCommand>();
}

}  // namespace gpuemu::cli
