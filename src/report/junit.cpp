// JUnit XML from result.json: a testsuite per op, a testcase per (op, dtype) named "op[dtype]".
// Implements the JUnit dialect Jenkins xUnit reads (tests/schemas/junit-jenkins.xsd) plus, in the
// standard flavour, the testcase file/line attributes GitLab and pytest emit (tests/schemas/junit.xsd).
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>
#include <vector>

#include <pugixml.hpp>

#include "report/findings.hpp"
#include "report/value_text.hpp"
#include "report/writer.hpp"

namespace gpuemu::report {

namespace {

// Failing cases spelled out in one testcase's failure text; the rest are counted.
constexpr std::size_t kCasesInText = 20;
// Failing seeds listed in a property.
constexpr std::size_t kSeedsInProperty = 50;

// Appends code point `cp` as UTF-8.
void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// XML 1.0 cannot carry most control characters, not even as character references, and scripts'
// stderr is full of them (ANSI colours). Show them as "\x1b"; replace invalid UTF-8 with U+FFFD.
std::string xml_text(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  for (std::size_t i = 0; i < in.size();) {
    auto byte = static_cast<unsigned char>(in[i]);
    std::size_t length = byte < 0x80           ? 1
                         : (byte >> 5) == 0x6  ? 2
                         : (byte >> 4) == 0xE  ? 3
                         : (byte >> 3) == 0x1E ? 4
                                               : 0;
    char32_t cp = length == 1 ? byte : length == 2 ? byte & 0x1F : length == 3 ? byte & 0x0F : byte & 0x07;
    bool valid = length > 0 && i + length <= in.size();
    for (std::size_t k = 1; valid && k < length; ++k) {
      auto next = static_cast<unsigned char>(in[i + k]);
      valid = (next & 0xC0) == 0x80;
      cp = (cp << 6) | (next & 0x3F);
    }
    static constexpr char32_t kMinimum[] = {0, 0, 0x80, 0x800, 0x10000};
    valid = valid && cp >= kMinimum[length] && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF);
    if (!valid) {
      append_utf8(out, 0xFFFD);
      i += 1;
      continue;
    }
    if ((cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') || cp == 0x7F || cp == 0xFFFE || cp == 0xFFFF) {
      char escaped[16];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", static_cast<unsigned>(cp & 0xFFFF));
      out += escaped;
    } else {
      out.append(in.substr(i, length));
    }
    i += length;
  }
  return out;
}

void set(pugi::xml_node node, const char* name, std::string_view value) {
  node.append_attribute(name).set_value(xml_text(value).c_str());
}

void add_property(pugi::xml_node properties, std::string_view name, std::string_view value) {
  auto property = properties.append_child("property");
  set(property, "name", name);
  set(property, "value", value);
}

// One failing case as the failure text shows it: everything needed to understand and replay it.
void describe_case(std::ostringstream& text, const result::FailureEntry& f) {
  const std::string& kind = f.kind;
  const std::string& message = f.message;
  text << "\ncase seed " << f.seed << ": " << (message.starts_with(kind + ":") ? "" : kind + ": ") << message
       << "\n";
  // A version-1 reader tolerates a failure without layout or distribution: "-" says so.
  text << "  layout " << (f.layout.empty() ? "-" : f.layout) << ", distribution "
       << (f.distribution.empty() ? "-" : f.distribution);
  text << ", shapes " << format_shapes(f.shapes);
  if (!f.dims.empty()) text << ", dims " << format_dims(f.dims);
  text << "\n";
  // Error statistics mean something only for kinds that compared values.
  if (compares_values(kind)) {
    text << "  max_abs " << format_number(f.figures.max_abs) << ", max_rel "
         << format_number(f.figures.max_rel) << ", max_ulp " << format_number(f.figures.max_ulp)
         << ", tolerance used " << format_number(f.figures.tolerance_used) << " (atol "
         << format_number(f.atol) << ", rtol " << format_number(f.rtol) << ")";
    text << "; " << f.mismatches << " of " << f.elements << " elements outside tolerance";
    text << "\n";
  }
  for (const auto& w : f.worst) {
    text << "  worst " << (w.output.empty() ? "out" : w.output) << format_index(w.index) << ": actual "
         << format_number(w.actual) << ", expected " << format_number(w.expected) << " (abs err "
         << format_number(w.abs_err) << ", rel err " << format_number(w.rel_err) << ")\n";
  }
  text << "  replay: " << f.replay << "\n";
  if (!f.stderr_text.empty()) {
    text << "  stderr:\n";
    std::istringstream lines(f.stderr_text);
    for (std::string line; std::getline(lines, line);) text << "    " << line << "\n";
  }
}

bool is_error_kind(const result::FailureEntry& failure) {
  return failure.kind == "op_error" || failure.kind == "reference_error";
}

struct Counts {
  int tests = 0, failures = 0, errors = 0, skipped = 0;
};

void write_testcase(pugi::xml_node suite, const result::ResultDocument& result, const result::OpEntry& op,
                    const std::string& dtype, int total,
                    const std::vector<const result::FailureEntry*>& failures, const SourceLocation& location,
                    const RenderOptions& options, Counts& counts) {
  const std::string& name = op.op;
  auto testcase = suite.append_child("testcase");
  set(testcase, "name", case_label(name, dtype));
  set(testcase, "classname", name);
  if (options.junit_flavor == JunitFlavor::standard && location.known()) {
    set(testcase, "file", location.path);
    if (location.line > 0) testcase.append_attribute("line").set_value(location.line);
  }
  ++counts.tests;
  if (op.status() == result::OpStatus::not_run) {
    // No case of the op ran: an error, because the gate fails on it, unless --allow-partial
    // accepted the partial run; then a skip. Never a pass.
    const std::string message =
        "NOT RUN: no case of " + name + " ran before the run reached its time budget ([ci] thorough_timeout)";
    if (result.partial_allowed()) {
      ++counts.skipped;
      set(testcase.append_child("skipped"), "message", message + "; accepted by --allow-partial");
    } else {
      ++counts.errors;
      auto element = testcase.append_child("error");
      set(element, "type", "not_run");
      set(element, "message", message);
    }
    return;
  }
  if (failures.empty()) {
    if (total == 0) {
      ++counts.skipped;
      set(testcase.append_child("skipped"), "message",
          "no case of this dtype ran (not selected, e.g. by --quick, or the run stopped early)");
    }
    return;
  }
  const result::FailureEntry* worst = failures.front();
  bool all_errors = true;
  for (const auto* f : failures) {
    if (worse_case(*f, *worst)) worst = f;
    all_errors = all_errors && is_error_kind(*f);
  }
  auto element = testcase.append_child(all_errors ? "error" : "failure");
  ++(all_errors ? counts.errors : counts.failures);
  set(element, "type", worst->kind);
  std::string message = "seed " + std::to_string(worst->seed) + ": " + first_line(worst->message);
  if (message.size() > 500) message = message.substr(0, 500) + "...";
  set(element, "message", message);

  std::ostringstream text;
  text << case_label(name, dtype) << ": " << failures.size() << " of " << total << " cases failed\n";
  if (location.known()) text << "at " << format_location(location) << "\n";
  for (std::size_t i = 0; i < failures.size() && i < kCasesInText; ++i) describe_case(text, *failures[i]);
  if (failures.size() > kCasesInText) {
    text << "\n... and " << failures.size() - kCasesInText << " more failing cases (see result.json)\n";
  }
  element.append_child(pugi::node_pcdata).set_value(xml_text(text.str()).c_str());
}

void write_suite(pugi::xml_node suites, const result::ResultDocument& result, const result::OpEntry& op,
                 const RenderOptions& options, Counts& totals) {
  const std::string& name = op.op;
  auto location = op_location(op, options.workspace, options.project_root);
  // Testcases follow the op's dtypes; a failure of a dtype the summary lacks still gets one.
  std::vector<std::string> order;
  std::map<std::string, int> totals_by_dtype;
  std::map<std::string, std::vector<const result::FailureEntry*>> failures;
  for (const auto& d : op.dtypes) {
    order.push_back(d.dtype);
    totals_by_dtype[d.dtype] = static_cast<int>(d.total);
  }
  for (const auto& f : op.failures) {
    const std::string& dtype = f.dtype;
    if (!totals_by_dtype.contains(dtype)) {
      order.push_back(dtype);
      totals_by_dtype[dtype] = 0;
    }
    failures[dtype].push_back(&f);
  }

  auto suite = suites.append_child("testsuite");
  set(suite, "name", name);
  auto properties = suite.append_child("properties");
  add_property(properties, "seed", std::to_string(result.seed));
  add_property(properties, "config_digest", result.config_digest);
  if (location.known()) add_property(properties, "source", format_location(location));
  if (op.implementation) {
    add_property(properties, "op", op.spec.value_or(""));
    add_property(properties, "implementation", *op.implementation);
  }
  if (result.partial) add_property(properties, "partial", "true");
  for (const auto& dtype : order) {
    auto it = failures.find(dtype);
    if (it == failures.end()) continue;
    std::string seeds;
    for (std::size_t i = 0; i < it->second.size() && i < kSeedsInProperty; ++i) {
      seeds += (i ? " " : "") + std::to_string(it->second[i]->seed);
    }
    add_property(properties, dtype + ".failing_seeds", seeds);
    const result::FailureEntry* worst = it->second.front();
    for (const auto* f : it->second) worst = worse_case(*f, *worst) ? f : worst;
    add_property(properties, dtype + ".shapes", format_shapes(worst->shapes));
  }

  Counts counts;
  for (const auto& dtype : order) {
    write_testcase(suite, result, op, dtype, totals_by_dtype[dtype], failures[dtype], location, options,
                   counts);
  }
  // Attributes go first for readers that scan them, so insert them before the children.
  suite.insert_attribute_after("tests", suite.attribute("name")).set_value(counts.tests);
  suite.insert_attribute_after("failures", suite.attribute("tests")).set_value(counts.failures);
  suite.insert_attribute_after("errors", suite.attribute("failures")).set_value(counts.errors);
  suite.insert_attribute_after("skipped", suite.attribute("errors")).set_value(counts.skipped);
  totals.tests += counts.tests;
  totals.failures += counts.failures;
  totals.errors += counts.errors;
  totals.skipped += counts.skipped;
}

// ci.lint as one more suite: a testcase per [[kernels]] entry, failing with every violation.
void write_lint_suite(pugi::xml_node suites, const nlohmann::json& lint, const RenderOptions& options,
                      Counts& totals) {
  auto suite = suites.append_child("testsuite");
  set(suite, "name", "gpuemu lint");
  Counts counts;
  for (const auto& kernel : lint["kernels"]) {
    const std::string name = kernel["name"];
    const SourceLocation location{
        repo_relative(kernel["file"].get<std::string>(), options.workspace, options.project_root),
        kernel["line"].get<int>()};
    auto testcase = suite.append_child("testcase");
    set(testcase, "name", "lint " + name);
    set(testcase, "classname", "lint");
    if (options.junit_flavor == JunitFlavor::standard && location.known()) {
      set(testcase, "file", location.path);
      if (location.line > 0) testcase.append_attribute("line").set_value(location.line);
    }
    ++counts.tests;
    if (kernel.contains("skipped")) {
      ++counts.skipped;
      set(testcase.append_child("skipped"), "message", kernel.value("skipped", ""));
      continue;
    }
    const auto& violations = kernel["violations"];
    if (violations.empty()) continue;
    ++counts.failures;
    auto element = testcase.append_child("failure");
    set(element, "type", "lint_violation");
    set(element, "message", first_line(violations.front().value("message", "")));
    std::ostringstream text;
    text << "kernel " << name << ": " << violations.size() << " artifact check(s) failed\n";
    for (const auto& v : violations) {
      text << "  " << v.value("check", "") << ": " << v.value("message", "");
      const SourceLocation at{
          repo_relative(v["file"].get<std::string>(), options.workspace, options.project_root),
          v["line"].get<int>()};
      text << (at.known() ? " (at " + format_location(at) + ")" : std::string()) << "\n";
    }
    text << "  replay: gpuemu lint --kernel " << name << "\n";
    element.append_child(pugi::node_pcdata).set_value(xml_text(text.str()).c_str());
  }
  suite.insert_attribute_after("tests", suite.attribute("name")).set_value(counts.tests);
  suite.insert_attribute_after("failures", suite.attribute("tests")).set_value(counts.failures);
  suite.insert_attribute_after("errors", suite.attribute("failures")).set_value(0);
  suite.insert_attribute_after("skipped", suite.attribute("errors")).set_value(counts.skipped);
  totals.tests += counts.tests;
  totals.failures += counts.failures;
  totals.skipped += counts.skipped;
}

}  // namespace

Expected<std::string> write_junit(const result::ResultDocument& result, const RenderOptions& options) {
  pugi::xml_document document;
  auto declaration = document.append_child(pugi::node_declaration);
  declaration.append_attribute("version").set_value("1.0");
  declaration.append_attribute("encoding").set_value("UTF-8");
  auto suites = document.append_child("testsuites");
  set(suites, "name", "gpuemu " + result.project);
  Counts totals;
  for (const auto& op : result.ops) write_suite(suites, result, op, options, totals);
  // ci.lint keeps the JSON of `gpuemu lint` (its types belong to `artifact`).
  if (result.ci && result.ci->lint.is_object()) write_lint_suite(suites, result.ci->lint, options, totals);
  suites.append_attribute("tests").set_value(totals.tests);
  suites.append_attribute("failures").set_value(totals.failures);
  suites.append_attribute("errors").set_value(totals.errors);
  if (double seconds = result.duration_secs; std::isfinite(seconds) && seconds >= 0) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.3f", seconds);
    suites.append_attribute("time").set_value(buffer);
  }
  std::ostringstream out;
  document.save(out, "  ", pugi::format_default, pugi::encoding_utf8);
  return out.str();
}

}  // namespace gpuemu::report
