// `gpuemu results`, `gpuemu failures` and `gpuemu show SEED`: what the store remembers, newest
// first, as text or as the JSON documents of docs/commands.md.
#include <fmt/format.h>

#include <ctime>
#include <iostream>

#include "cli/command.hpp"
#include "cli/store_access.hpp"
#include "util/json_text.hpp"
#include "util/time.hpp"

namespace gpuemu::cli {
namespace {

// "--since": an ISO date or date-time (UTC), or an age such as 30m, 12h, 7d.
Expected<store::Millis> parse_since(const std::string& text) {
  const auto now = util::now_millis();
  if (text.size() >= 2 && std::isdigit(static_cast<unsigned char>(text[0]))) {
    const char unit = text.back();
    const std::string digits = text.substr(0, text.size() - 1);
    if ((unit == 's' || unit == 'm' || unit == 'h' || unit == 'd') &&
        digits.find_first_not_of("0123456789") == std::string::npos) {
      const long long n = std::stoll(digits);
      const long long scale = unit == 's' ? 1000 : unit == 'm' ? 60000 : unit == 'h' ? 3600000 : 86400000;
      return now - n * scale;
    }
  }
  std::tm tm{};
  for (const char* format : {"%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S", "%Y-%m-%d"}) {
    tm = {};
    const char* end = strptime(text.c_str(), format, &tm);
    if (end && *end == '\0') return static_cast<store::Millis>(timegm(&tm)) * 1000;
  }
  return fail(ErrorKind::usage, "--since '" + text + "' is not a time: use a UTC date (2026-11-22), a date-time "
                                "(2026-11-22T08:00:00) or an age (30m, 12h, 7d)");
}

nlohmann::json shapes_json(const result::CaseRecord& r) {
  nlohmann::json shapes = nlohmann::json::object();
  for (const auto& [name, shape] : r.shapes) shapes[name] = shape;
  return shapes;
}

nlohmann::json failure_json(const store::StoredFailure& f) {
  nlohmann::json j = result::case_to_json(f.record);
  j["id"] = f.id;
  j["run_id"] = f.run_id ? nlohmann::json(*f.run_id) : nlohmann::json(nullptr);
  j["config_digest"] = f.config_digest;
  j["minimized_from"] = f.minimized_from ? nlohmann::json(*f.minimized_from) : nlohmann::json(nullptr);
  j["created"] = util::iso_time(f.created_at);
  j["has_snapshot"] = f.has_snapshot;
  if (f.minimized_from) j["replay"] = fmt::format("gpuemu reproduce {}", f.record.seed);
  return j;
}

// --op and --limit, which `results` and `failures` both take, and the store query they select.
struct ListFilter {
  std::string op;
  int limit = 20;

  void add_options(CLI::App& app) {
    app.add_option("--op", op, "Only this op");
    app.add_option("--limit", limit, "At most this many rows (default 20; 0 = all)");
  }
  store::Query query() const {
    store::Query query;
    if (!op.empty()) query.op = op;
    query.limit = limit;
    return query;
  }
};

class ResultsCommand final : public Command {
  void add_options(CLI::App& app) override {
    filter_.add_options(app);
    app.add_option("--since", since_, "Only results since a UTC date/time or an age (30m, 12h, 7d)");
  }
  Expected<ExitCode> run(Context& context) override {
    store::Query query = filter_.query();
    if (!since_.empty()) query.since = TRY(parse_since(since_));
    auto store = TRY(open_store());
    const auto rows = TRY(store.list_results(query));
    if (context.globals.format == "json") {
      nlohmann::json list = nlohmann::json::array();
      for (const auto& r : rows) {
        nlohmann::json row = result::dtype_summary_to_json(r.summary);
        row["run_id"] = r.run_id;
        row["command"] = r.command;
        row["op"] = r.op;
        row["created"] = util::iso_time(r.created_at);
        list.push_back(std::move(row));
      }
      std::cout << util::dump_json({{"results", list}}) << "\n";
      return ExitCode::ok;
    }
    if (rows.empty()) std::cout << "no results stored yet: run gpuemu test or gpuemu fuzz\n";
    for (const auto& r : rows) {
      const auto& d = r.summary;
      std::cout << fmt::format(
          "{}  run {:<5} {:<9} {:<28} {:<9} {:>5} cases {:>4} failed {:>4} errors  max_abs {:.3g}\n",
          util::iso_time(r.created_at), r.run_id, r.command, r.op, tensor::dtype_name(d.dtype), d.total,
          d.failed, d.errors, d.max_abs);
    }
    return ExitCode::ok;
  }
  ListFilter filter_;
  std::string since_;
};

class FailuresCommand final : public Command {
  void add_options(CLI::App& app) override { filter_.add_options(app); }
  Expected<ExitCode> run(Context& context) override {
    auto store = TRY(open_store());
    const auto rows = TRY(store.list_failures(filter_.query()));
    if (context.globals.format == "json") {
      nlohmann::json list = nlohmann::json::array();
      for (const auto& f : rows) list.push_back(failure_json(f));
      std::cout << util::dump_json({{"failures", list}}) << "\n";
      return ExitCode::ok;
    }
    if (rows.empty()) std::cout << "no failures stored\n";
    for (const auto& f : rows) {
      const auto& r = f.record;
      std::string shapes;
      for (const auto& [name, shape] : r.shapes) shapes += " " + name + tensor::shape_to_string(shape);
      std::cout << fmt::format("{}  {:<20} {:<28} {:<20} {:<9}{}{}\n", util::iso_time(f.created_at), r.seed,
                               r.op, check::failure_kind_name(r.verdict.kind),
                               tensor::dtype_name(r.params.dtype), shapes,
                               f.minimized_from ? "  (minimized)" : "");
    }
    return ExitCode::ok;
  }
  ListFilter filter_;
};

class ShowCommand final : public Command {
  void add_options(CLI::App& app) override {
    app.add_option("seed", seed_, "Case seed of a stored failure")->required();
    app.add_option("--op", op_, "Only failures of this op");
  }
  Expected<ExitCode> run(Context& context) override {
    const auto seed = TRY(parse_seed(seed_, "seed"));
    auto store = TRY(open_store());
    const auto found = TRY(store.find_failure(seed, op_.empty() ? std::nullopt : std::optional(op_)));
    if (!found) {
      return fail(ErrorKind::usage, fmt::format("no stored failure has seed {}; list them with 'gpuemu failures'", seed));
    }
    nlohmann::json doc = failure_json(*found);
    nlohmann::json inputs = nlohmann::json::object();
    if (found->record.inputs) {
      for (const auto& [name, t] : *found->record.inputs) {
        inputs[name] = {{"dtype", tensor::dtype_name(t.dtype)}, {"shape", t.shape}, {"strides", t.strides},
                        {"bytes", t.data.size()}};
      }
    }
    doc["snapshot"] = inputs;
    const auto minimized = TRY(store.list_minimized(found->id));
    nlohmann::json children = nlohmann::json::array();
    for (const auto& m : minimized) children.push_back({{"seed", std::to_string(m.record.seed)}, {"shapes", shapes_json(m.record)}});
    doc["minimized"] = children;
    if (context.globals.format == "json") {
      std::cout << util::dump_json(doc) << "\n";
      return ExitCode::ok;
    }
    const auto& r = found->record;
    std::cout << fmt::format("seed {}  op {}  {}  stored {}  run {}\n", r.seed, r.op,
                             check::failure_kind_name(r.verdict.kind), util::iso_time(found->created_at),
                             found->run_id ? std::to_string(*found->run_id) : "-");
    std::cout << fmt::format("  dtype {}  layout {}  values {}\n", tensor::dtype_name(r.params.dtype),
                             tensor::layout_name(r.params.layout), rng::distribution_name(r.params.distribution));
    for (const auto& [name, shape] : r.shapes) std::cout << "  input " << name << " " << tensor::shape_to_string(shape) << "\n";
    std::cout << fmt::format("  max_abs {:.6g}  max_rel {:.6g}  max_ulp {:.6g}  (atol {:g}, rtol {:g})\n",
                             r.verdict.stats.max_abs, r.verdict.stats.max_rel, r.verdict.stats.max_ulp,
                             r.tolerance.atol, r.tolerance.rtol);
    std::cout << "  " << r.verdict.message << "\n";
    for (const auto& w : r.verdict.stats.worst) {
      std::string index;
      for (auto i : w.index) index += (index.empty() ? "" : ", ") + std::to_string(i);
      std::cout << fmt::format("    {}[{}]  got {:.9g}  expected {:.9g}\n", w.output, index, w.actual, w.expected);
    }
    if (found->minimized_from) std::cout << "  minimized from failure " << *found->minimized_from << "\n";
    for (const auto& m : minimized) std::cout << "  minimized as seed " << m.record.seed << "\n";
    std::cout << "  config digest " << found->config_digest << "\n";
    std::cout << "  replay: " << doc["replay"].get<std::string>() << "\n";
    return ExitCode::ok;
  }
  std::string seed_;
  std::string op_;
};

}  // namespace

std::unique_ptr<Command> make_results_command() { return std::make_unique<ResultsCommand>(); }
std::unique_ptr<Command> make_failures_command() { return std::make_unique<FailuresCommand>(); }
std::unique_ptr<Command> make_show_command() { return std::make_unique<ShowCommand>(); }

}  // namespace gpuemu::cli
