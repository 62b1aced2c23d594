// Renders a signed report as HTML or Markdown (see render.hpp). Both formats are written from
// one list of titled tables, so they always show the same facts.
#include "attest/render.hpp"

#include <fmt/format.h>
#include <vector>

#include "attest/dsse.hpp"
#include "attest/statement.hpp"
#include "util/result_keys.hpp"
#include "util/text_escape.hpp"

namespace gpuemu::attest {

namespace keys = util::result_keys;
namespace {

using nlohmann::json;

struct Table {
  std::string title;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::string empty_text;  // shown instead of an empty table
};

std::string cell(const json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number_float()) return fmt::format("{:.4g}", value.get<double>());
  if (value.is_null()) return "";
  return value.dump();
}

std::string shapes_text(const json& shapes) {
  std::string out;
  for (const auto& [name, shape] : shapes.items()) {
    if (!out.empty()) out += " ";
    out += name + "=" + shape.dump();
  }
  return out;
}

// A run that passed with --allow-partial did not check every planned case: "passed" alone would
// overstate what the signature vouches for.
std::string result_text(const json& p) {
  if (!p["passed"].get<bool>()) return "failures found";
  return p["partial"].get<bool>() ? "no failures in the cases that ran; not every planned case ran"
                                  : "all cases passed";
}

std::vector<Table> tables_of(const json& statement) {
  const json& p = statement["predicate"];
  Table run{"Run", {"Field", "Value"}, {}, ""};
  run.rows = {{"Tool", cell(p["tool"]["name"]) + " " + cell(p["tool"]["version"])},
              {"Command", cell(p["command"])},
              {"Result", result_text(p)},
              {"Partial run", p["partial"].get<bool>() ? "yes (stopped before all cases ran)" : "no"},
              {"Master seed", cell(p["seed"])},
              {"Config digest", cell(p["config_digest"])},
              {"Timestamp", cell(p["timestamp"])}};
  if (p.contains("project")) run.rows.insert(run.rows.begin() + 1, {"Project", cell(p["project"])});

  Table dtypes{"Results per op and dtype",
               {"Op", "Source", "Dtype", "Cases", "Passed", "Failed", "Errors", "Max abs", "Max rel",
                "Max ULP", "Tolerance used", "atol", "rtol"},
               {},
               "No ops were run."};
  Table failures{"Failures",
                 {"Op", "Seed", "Kind", "Dtype", "Shapes", "Max abs", "Max rel", "Max ULP", "Replay"},
                 {},
                 "No failing cases."};
  for (const json& op : p["ops"]) {
    for (const json& d : op["dtypes"]) {
      dtypes.rows.push_back({cell(op["op"]), cell(op["source"]), cell(d["dtype"]), cell(d["total"]),
                             cell(d["passed"]), cell(d["failed"]), cell(d["errors"]), cell(d[keys::kMaxAbs]),
                             cell(d[keys::kMaxRel]), cell(d[keys::kMaxUlp]), cell(d[keys::kToleranceUsed]),
                             cell(d[keys::kAtol]), cell(d[keys::kRtol])});
    }
    for (const json& f : op["failures"]) {
      failures.rows.push_back({cell(op["op"]), cell(f["seed"]), cell(f["kind"]), cell(f["dtype"]),
                               shapes_text(f["shapes"]), cell(f[keys::kMaxAbs]),
                               cell(f.value(keys::kMaxRel, json())), cell(f.value(keys::kMaxUlp, json())),
                               cell(f.value("replay", json()))});
    }
  }
  Table subjects{"Subjects (SHA-256)", {"Name", "Role", "sha256"}, {}, ""};
  for (const json& s : statement["subject"]) {
    subjects.rows.push_back({cell(s["name"]),
                             cell(s.value("annotations", json::object()).value("gpuemu.role", json("-"))),
                             cell(s["digest"]["sha256"])});
  }
  return {run, dtypes, failures, subjects};
}

std::string render_markdown(const std::vector<Table>& tables, const VerifyStatus& status) {
  std::string out = "# Kernel Correctness Report\n\n";
  out += "**Verification:** " + util::markdown_inline(status.summary) + "\n";
  for (const auto& table : tables) {
    out += "\n## " + util::markdown_inline(table.title) + "\n\n";
    if (table.rows.empty()) {
      out += util::markdown_inline(table.empty_text) + "\n";
      continue;
    }
    std::string rule = "|";
    out += "|";
    for (const auto& h : table.header) {
      out += " " + util::markdown_inline(h) + " |";
      rule += " --- |";
    }
    out += "\n" + rule + "\n";
    for (const auto& row : table.rows) {
      out += "|";
      for (const auto& c : row) out += " " + util::markdown_inline(c) + " |";
      out += "\n";
    }
  }
  return out;
}

std::string render_html(const std::vector<Table>& tables, const VerifyStatus& status) {
  const char* css_class = status.state == VerifyStatus::State::valid     ? "valid"
                          : status.state == VerifyStatus::State::invalid ? "invalid"
                                                                         : "unchecked";
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<title>Kernel Correctness Report</title>\n<style>\n"
      "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin-bottom:1.5em}"
      "th,td{border:1px solid #999;padding:.25em .5em;text-align:left}"
      ".valid{color:#060}.invalid{color:#b00}.unchecked{color:#a60}\n"
      "</style>\n</head>\n<body>\n<h1>Kernel Correctness Report</h1>\n";
  out += fmt::format("<p class=\"{}\"><strong>Verification:</strong> {}</p>\n", css_class,
                     util::html_text(status.summary));
  for (const auto& table : tables) {
    out += "<h2>" + util::html_text(table.title) + "</h2>\n";
    if (table.rows.empty()) {
      out += "<p>" + util::html_text(table.empty_text) + "</p>\n";
      continue;
    }
    out += "<table>\n<tr>";
    for (const auto& h : table.header) out += "<th>" + util::html_text(h) + "</th>";
    out += "</tr>\n";
    for (const auto& row : table.rows) {
      out += "<tr>";
      for (const auto& c : row) out += "<td>" + util::html_text(c) + "</td>";
      out += "</tr>\n";
    }
    out += "</table>\n";
  }
  return out + "</body>\n</html>\n";
}

}  // namespace

bool is_dsse_envelope(const nlohmann::json& document) {
  return document.is_object() && document.contains("payloadType") && document.contains("payload") &&
         document.contains("signatures");
}

Expected<std::string> render_report(const nlohmann::json& envelope, const VerifyStatus& status,
                                    RenderFormat format) {
  auto parsed = TRY(parse_envelope(envelope));
  auto statement = json::parse(text_of(parsed.payload), nullptr, false);
  if (statement.is_discarded()) {
    return fail(ErrorKind::parse, "envelope: the payload is not JSON, so there is nothing to render");
  }
  TRY(check_statement(statement));
  auto tables = tables_of(statement);
  return format == RenderFormat::html ? render_html(tables, status) : render_markdown(tables, status);
}

}  // namespace gpuemu::attest
