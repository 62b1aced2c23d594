// [project], [validation], [policies] and [ci]: the sections with one table each. Defaults live
// in config.hpp; here we only overwrite what the file sets, after checking it.

#include "config/key_table.hpp"
#include "config/sections.hpp"
#include "config/value_parsers.hpp"
#include "util/seed.hpp"

namespace gpuemu::config {

namespace {

// A table at the root, or an empty one so absent sections read as all-defaults.
Expected<TableReader> root_section(const Diagnostics& diag, const toml::table& root, std::string_view key,
                                   const toml::table& empty) {
  const TableReader top(diag, root, "", "the top level");
  const toml::table* t = TRY(top.subtable(key));
  return TableReader(diag, t != nullptr ? *t : empty, key, "[" + std::string(key) + "]");
}

// Seeds are u64: TOML integers stop at 2^63 - 1, so larger seeds are written as decimal strings.
Expected<std::optional<std::uint64_t>> parse_seed(const TableReader& r) {
  const toml::node* n = r.node("seed");
  if (n == nullptr) return std::nullopt;
  const std::string hint =
      "write a non-negative integer, or a decimal string such as seed = \"18446744073709551615\" "
      "for seeds above 2^63 - 1";
  if (const auto* i = n->as_integer()) {
    if (i->get() < 0)
      return r.diag().at(*n, "'seed' must not be negative, got " + std::to_string(i->get()), hint);
    return static_cast<std::uint64_t>(i->get());
  }
  if (const auto* s = n->as_string()) {
    const std::string& text = s->get();
    const auto value = util::parse_seed(text);
    if (!value) {
      return r.diag().at(
          *n, "'seed' string \"" + text + "\" is not a decimal number from " + std::string(util::kSeedRange),
          hint);
    }
    return *value;
  }
  return r.type_error("seed", *n, "an integer or a decimal string");
}

}  // namespace

Expected<ProjectConfig> parse_project(const Diagnostics& diag, const toml::table& root) {
  ProjectConfig project;
  const toml::table empty;
  const TableReader r = TRY(root_section(diag, root, "project", empty));
  if (root.get("project") == nullptr) {
    return diag.at(toml::source_region{}, "no [project] table with a name",
                   "add [project] with name = \"my-project\"");
  }
  TRY(r.only_keys());
  project.name = TRY(r.required_string("name", "\"my-project\"")).value;
  if (auto v = TRY(r.string("version"))) project.version = *v;
  if (auto f = TRY(parse_framework_key(r, "framework"))) {
    project.framework = std::string(framework_name(*f));
    project.framework_written = true;
  }
  if (auto f = TRY(parse_choice(r, "numpy_bfloat16", {"ml_dtypes", "float32"}, "forms"))) {
    project.numpy_bfloat16 = parse_numpy_bfloat16(*f).value_or(NumpyBfloat16::ml_dtypes);
  }
  return project;
}

Expected<ValidationConfig> parse_validation(const Diagnostics& diag, const toml::table& root) {
  ValidationConfig v;
  const toml::table empty;
  const TableReader r = TRY(root_section(diag, root, "validation", empty));
  TRY(r.only_keys());
  if (auto m = TRY(parse_interpret_key(r, "triton_interpret"))) v.triton_interpret = *m;
  if (auto m = TRY(parse_interpret_key(r, "pallas_interpret"))) v.pallas_interpret = *m;
  if (auto d = TRY(parse_dtype_list(r, "dtypes"))) v.dtypes = *d;
  if (auto b = TRY(r.boolean("check_nan"))) v.check_nan = *b;
  if (auto b = TRY(r.boolean("sanitize"))) v.sanitize = *b;
  if (auto b = TRY(r.boolean("check_inf"))) v.check_inf = *b;
  if (auto s = TRY(parse_seed(r))) v.seed = *s;
  v.tolerances = TRY(parse_tolerances(r, "tolerances", "[validation.tolerances]", check::default_tolerance));
  if (auto t = TRY(r.timeout_seconds("timeout"))) v.timeout = *t;
  if (auto p = TRY(r.string_item("python"))) {
    if (p->value.empty())
      return diag.at(*p->node, "'python' must not be empty", "write python = \"python3\"");
    // A bare name is looked up in PATH; anything with a slash is a path relative to this file.
    const fs::path written(p->value);
    v.python = p->value.find('/') == std::string::npos || written.is_absolute()
                   ? p->value
                   : (diag.base_dir(p->node->source()) / written).lexically_normal().string();
  }
  if (auto dirs = TRY(r.strings("python_path"))) {
    for (const StringItem& item : *dirs) {
      const fs::path dir = (diag.base_dir(item.node->source()) / item.value).lexically_normal();
      std::error_code ec;
      if (!fs::is_directory(dir, ec)) {
        return diag.at(
            *item.node,
            "python_path directory not found: '" + item.value + "' (looked for " + dir.string() + ")",
            "paths are relative to the directory of the file that names them");
      }
      v.python_path.push_back(dir);
    }
  }
  if (auto n = TRY(r.int_in_range("test_cases", 1, kMaxCasesPerOp))) v.test_cases = *n;
  if (auto n = TRY(r.int_in_range("fuzz_iterations", 1, kMaxCasesPerOp))) v.fuzz_iterations = *n;
  if (auto n = TRY(r.int_at_least("worker_max_cases", 1))) v.worker_max_cases = *n;
  for (auto [key, limit] : {std::pair{"max_case_elements", &v.max_case_elements},
                            std::pair{"max_case_bytes", &v.max_case_bytes}}) {
    if (auto n = TRY(r.integer(key))) {
      if (*n < 1) {
        return diag.at(*r.node(key),
                       "'" + std::string(key) + "' must be at least 1, got " + std::to_string(*n),
                       "it bounds the size of one case; the default is " + std::to_string(*limit));
      }
      *limit = *n;
    }
  }
  return v;
}

Expected<PolicyConfig> parse_policies(const Diagnostics& diag, const toml::table& root, PolicyConfig base) {
  PolicyConfig p = std::move(base);
  const toml::table empty;
  const TableReader r = TRY(root_section(diag, root, "policies", empty));
  TRY(r.only_keys());
  if (auto b = TRY(r.boolean("fail_on_regression"))) p.fail_on_regression = *b;
  if (auto w = TRY(r.number("warn_threshold"))) {
    if (*w < 0 || *w > 1) {
      return diag.at(*r.node("warn_threshold"),
                     "'warn_threshold' must be between 0 and 1, got " + number_text(*w),
                     "it is the fraction of the tolerance a passing case may use before a warning, e.g. 0.8");
    }
    p.warn_threshold = *w;
  }
  if (auto g = TRY(r.number("max_error_growth"))) {
    if (*g <= 1) {
      return diag.at(*r.node("max_error_growth"), "'max_error_growth' must be greater than 1",
                     "it is the factor by which max error may grow before a regression, e.g. 2.0");
    }
    p.max_error_growth = *g;
  }
  if (auto m = TRY(r.number("regression_margin"))) {
    if (*m <= 0 || *m > 1) {
      return diag.at(*r.node("regression_margin"),
                     "'regression_margin' must be greater than 0 and at most 1, got " + number_text(*m),
                     "it is the share of the tolerance by which a passing kernel's error may grow before a "
                     "regression, e.g. 0.5");
    }
    p.regression_margin = *m;
  }
  if (const toml::table* t = TRY(r.subtable("artifact_thresholds"))) {
    const TableReader thresholds(diag, *t, kUserNamedKeys, "[policies.artifact_thresholds]");
    for (const toml::key* k : keys_in_file_order(*t)) {
      const auto value = TRY(thresholds.number(k->str()));
      if (*value < 0)
        return diag.at(*t->get(k->str()), "'" + std::string(k->str()) + "' must not be negative");
      p.artifact_thresholds[std::string(k->str())] = *value;
    }
  }
  return p;
}

Expected<CiConfig> parse_ci(const Diagnostics& diag, const toml::table& root, CiConfig base) {
  CiConfig c = std::move(base);
  const toml::table empty;
  const TableReader r = TRY(root_section(diag, root, "ci", empty));
  TRY(r.only_keys());
  if (auto d = TRY(parse_dtype_list(r, "quick_dtypes"))) c.quick_dtypes = *d;
  if (auto n = TRY(r.int_at_least("thorough_timeout", 1))) c.thorough_timeout = *n;
  if (auto n = TRY(r.int_at_least("parallel_jobs", 1))) c.parallel_jobs = *n;
  if (auto n = TRY(r.int_in_range("quick_iterations", 1, kMaxCasesPerOp))) c.quick_iterations = *n;
  if (auto n = TRY(r.int_in_range("fuzz_iterations", 1, kMaxCasesPerOp))) c.fuzz_iterations = *n;
  return c;
}

}  // namespace gpuemu::config
