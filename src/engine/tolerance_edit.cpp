// `calibrate --write`: rewrites one op's [ops.tolerances] lines in gpuemu.toml as text, so that
// comments, key order and spacing stay exactly as the user wrote them (see calibrate.hpp).
#include <fmt/format.h>
#include <unistd.h>

#include <regex>
#include <sstream>

#include "config/loader.hpp"
#include "engine/calibrate.hpp"
#include "util/atomic_file.hpp"
#include "util/read_file.hpp"

namespace gpuemu::engine {
namespace {

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::string line;
  std::istringstream in(text);
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

bool is_header(const std::string& line) {
  return trim(line).starts_with("[");
}

std::string header_name(const std::string& line) {
  std::string t = trim(line);
  const auto close = t.find(']');
  return close == std::string::npos ? t : t.substr(0, close + (t.starts_with("[[") ? 2 : 1));
}

std::string tolerance_line(const CalibrationRow& row) {
  return fmt::format("{} = {{ atol = {:.3g}, rtol = {:.3g} }}", tensor::dtype_name(row.dtype),
                     row.fitted.atol, row.fitted.rtol);
}

}  // namespace

Expected<std::string> edit_tolerances_text(const std::string& text, const std::string& op_name,
                                           const std::vector<CalibrationRow>& rows) {
  auto lines = split_lines(text);
  const std::regex name_line(R"(^\s*name\s*=\s*["']([^"']*)["'])");
  // Find the [[ops]] block whose name is op_name: from its header to the next [[...]] or a
  // top-level [table] that does not belong to ops.
  std::size_t begin = lines.size();
  std::size_t end = lines.size();
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (header_name(lines[i]) != "[[ops]]") continue;
    std::size_t j = i + 1;
    bool match = false;
    for (; j < lines.size(); ++j) {
      if (is_header(lines[j])) {
        const auto h = header_name(lines[j]);
        if (h.starts_with("[[") || !h.starts_with("[ops.")) break;
      }
      std::smatch m;
      if (!is_header(lines[j]) && std::regex_search(lines[j], m, name_line) && m[1] == op_name) match = true;
    }
    if (match) {
      begin = i;
      end = j;
      break;
    }
  }
  if (begin == lines.size()) {
    return fail(ErrorKind::config,
                "no [[ops]] table named '" + op_name + "' in the config file; cannot write tolerances");
  }
  // Drop trailing blank lines from the block so additions sit with the op.
  while (end > begin + 1 && trim(lines[end - 1]).empty()) --end;

  std::size_t table = lines.size();
  std::size_t table_end = end;
  for (std::size_t i = begin + 1; i < end; ++i) {
    if (is_header(lines[i]) && header_name(lines[i]) == "[ops.tolerances]") {
      table = i;
      table_end = i + 1;
      while (table_end < end && !is_header(lines[table_end])) ++table_end;
      break;
    }
  }
  if (table == lines.size()) {
    std::vector<std::string> added = {"", "[ops.tolerances]"};
    for (const auto& row : rows) added.push_back(tolerance_line(row));
    lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(end), added.begin(), added.end());
  } else {
    for (const auto& row : rows) {
      const std::regex key(fmt::format(R"(^\s*{}\s*=)", tensor::dtype_name(row.dtype)));
      bool replaced = false;
      for (std::size_t i = table + 1; i < table_end; ++i) {
        if (std::regex_search(lines[i], key)) {
          lines[i] = tolerance_line(row);
          replaced = true;
          break;
        }
      }
      if (!replaced) {
        std::size_t at = table_end;
        while (at > table + 1 && trim(lines[at - 1]).empty()) --at;
        lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(at), tolerance_line(row));
        ++table_end;
        ++end;
      }
    }
  }
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  if (!text.empty() && text.back() != '\n' && !out.empty()) out.pop_back();
  return out;
}

Expected<void> write_tolerances(const std::filesystem::path& file, const std::string& op_name,
                                const std::vector<CalibrationRow>& rows) {
  const std::string text =
      TRY(util::read_text_file(file, "the config file to update its tolerances",
                               {config::kMaxConfigFileBytes, util::Symlinks::follow, ErrorKind::io}));
  const std::string edited = TRY(edit_tolerances_text(text, op_name, rows));
  // Atomic replace: a crash leaves either the old file or the new one, never half of each.
  TRY(util::write_file_atomically(file, edited));
  return {};
}

}  // namespace gpuemu::engine
