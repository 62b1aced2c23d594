// Diagnostics for gpuemu.toml in the form "path:line:col: error: message", then the offending
// line, a caret under the column, and an optional "hint: ..." saying what to write instead.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <string_view>

#include <toml++/toml.h>

#include "config/config.hpp"
#include "util/error.hpp"

namespace gpuemu::config {

// Whether a diagnostic quotes the offending line. A file whose name does not end in .toml may not
// be a gpuemu file at all (a wrong --config, a path a client sent): its text is never shown.
enum class Quote { line, none };

// The full text of one diagnostic. `line_text` is the source line (without newline); line and
// column are 1-based; line 0 means "no position" and prints only "path: error: message".
std::string format_diagnostic(std::string_view path, int line, int column, std::string_view line_text,
                              std::string_view message, std::string_view hint = {},
                              Quote quote = Quote::line);

// Quote::line for a file named *.toml, else Quote::none.
Quote quote_for(const std::filesystem::path& file);

// The files of one load, so any node's error can quote its line and any relative path can be
// resolved against the directory of the file that wrote it.
class Diagnostics {
 public:
  // `display_path` is how the file is named in messages and in toml++ source regions;
  // `absolute_path` is where it lives.
  void add_file(const std::string& display_path, const std::filesystem::path& absolute_path,
                std::string text);

  // The display path of the project file (used when an error has no source region).
  const std::string& project_display() const { return project_display_; }
  void set_project_display(std::string path) { project_display_ = std::move(path); }

  std::unexpected<Error> at(const toml::source_region& where, std::string_view message,
                            std::string_view hint = {}) const;
  std::unexpected<Error> at(const toml::node& node, std::string_view message,
                            std::string_view hint = {}) const {
    return at(node.source(), message, hint);
  }
  std::unexpected<Error> at(const toml::key& key, std::string_view message,
                            std::string_view hint = {}) const {
    return at(key.source(), message, hint);
  }

  // Directory of the file a node came from: the base for relative paths it contains.
  std::filesystem::path base_dir(const toml::source_region& where) const;
  // Display path of the file a node came from.
  std::string file_of(const toml::source_region& where) const;
  // "path:line:col" of a region, for "first defined at ..." hints.
  std::string position(const toml::source_region& where) const;
  // The region as a SourceLocation with its line's text, for diagnostics after loading.
  SourceLocation locate(const toml::source_region& where) const;

 private:
  struct File {
    std::filesystem::path absolute;
    std::string text;
  };
  std::map<std::string, File, std::less<>> files_;
  std::string project_display_;
};

}  // namespace gpuemu::config
