// Formats config errors as path:line:col, the offending line and a caret, so a person sees what to fix
// without opening the file; maps toml++ source regions back to their file, for quoting and paths.
#include "config/diagnostic.hpp"

namespace gpuemu::config {

namespace {

std::string_view nth_line(std::string_view text, int line) {
  std::size_t start = 0;
  for (int i = 1; i < line; ++i) {
    const std::size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) return {};
    start = nl + 1;
  }
  std::size_t end = text.find('\n', start);
  if (end == std::string_view::npos) end = text.size();
  std::string_view out = text.substr(start, end - start);
  if (!out.empty() && out.back() == '\r') out.remove_suffix(1);
  return out;
}

// toml++ counts columns in code points; keep tabs so the caret lines up under tabbed text.
std::string caret_line(std::string_view line_text, int column) {
  std::string out;
  int seen = 1;
  for (std::size_t i = 0; i < line_text.size() && seen < column; ++i) {
    const auto c = static_cast<unsigned char>(line_text[i]);
    if ((c & 0xC0) == 0x80) continue;  // UTF-8 continuation byte: same code point
    out += c == '\t' ? '\t' : ' ';
    ++seen;
  }
  for (; seen < column; ++seen) out += ' ';
  out += '^';
  return out;
}

}  // namespace

std::string format_diagnostic(std::string_view path, int line, int column, std::string_view line_text,
                              std::string_view message, std::string_view hint, Quote quote) {
  std::string out(path);
  if (line > 0) {
    out += ":" + std::to_string(line) + ":" + std::to_string(column > 0 ? column : 1);
  }
  out += ": error: ";
  out += message;
  if (line > 0 && quote == Quote::line) {
    out += "\n";
    out += line_text;
    out += "\n";
    out += caret_line(line_text, column > 0 ? column : 1);
  }
  if (!hint.empty()) {
    out += "\nhint: ";
    out += hint;
  }
  return out;
}

Quote quote_for(const std::filesystem::path& file) {
  return file.extension() == ".toml" ? Quote::line : Quote::none;
}

void Diagnostics::add_file(const std::string& display_path, const std::filesystem::path& absolute_path,
                           std::string text) {
  files_[display_path] = File{absolute_path, std::move(text)};
}

std::string Diagnostics::file_of(const toml::source_region& where) const {
  return where.path ? *where.path : project_display_;
}

std::unexpected<Error> Diagnostics::at(const toml::source_region& where, std::string_view message,
                                       std::string_view hint) const {
  const std::string path = file_of(where);
  const int line = static_cast<int>(where.begin.line);
  const int column = static_cast<int>(where.begin.column);
  std::string_view line_text;
  Quote quote = quote_for(path);
  if (const auto it = files_.find(path); it != files_.end()) {
    quote = quote_for(it->second.absolute);
    if (line > 0) line_text = nth_line(it->second.text, line);
  }
  return fail(ErrorKind::config, format_diagnostic(path, line, column, line_text, message, hint, quote));
}

std::filesystem::path Diagnostics::base_dir(const toml::source_region& where) const {
  const auto it = files_.find(file_of(where));
  if (it == files_.end()) return std::filesystem::current_path();
  return it->second.absolute.parent_path();
}

SourceLocation Diagnostics::locate(const toml::source_region& where) const {
  SourceLocation out{file_of(where), static_cast<int>(where.begin.line), static_cast<int>(where.begin.column), {}};
  // Only a file named *.toml is ever quoted (quote_for).
  if (const auto it = files_.find(out.file.string());
      it != files_.end() && out.line > 0 && quote_for(it->second.absolute) == Quote::line) {
    out.line_text = std::string(nth_line(it->second.text, out.line));
  }
  return out;
}

std::string diagnostic_at(const SourceLocation& where, std::string_view message, std::string_view hint) {
  return format_diagnostic(where.file.string(), where.line, where.column, where.line_text, message, hint);
}

std::string Diagnostics::position(const toml::source_region& where) const {
  return file_of(where) + ":" + std::to_string(where.begin.line) + ":" + std::to_string(where.begin.column);
}

}  // namespace gpuemu::config
