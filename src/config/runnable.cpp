// The Runnable rule of docs/configuration.md: a callable spelling is never a path, so a script
// named like "pkg.mod:fn" cannot be meant; every other value must be an existing file.
#include "config/runnable.hpp"

#include <cctype>
#include <system_error>

namespace gpuemu::config {

namespace fs = std::filesystem;

bool is_identifier(std::string_view s) {
  if (s.empty()) return false;
  const auto c0 = static_cast<unsigned char>(s.front());
  if (!(std::isalpha(c0) || c0 == '_')) return false;
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (!(std::isalnum(c) || c == '_')) return false;
  }
  return true;
}

bool is_dotted_module(std::string_view s) {
  if (s.empty()) return false;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = s.find('.', start);
    if (!is_identifier(
            s.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start))) {
      return false;
    }
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

bool is_callable_spelling(std::string_view s) {
  const std::size_t colon = s.find(':');
  if (colon == std::string_view::npos) return false;
  return is_dotted_module(s.substr(0, colon)) && is_identifier(s.substr(colon + 1));
}

Expected<Runnable> resolve_runnable(const Diagnostics& diag, const StringItem& item, std::string_view key) {
  Runnable r;
  r.spelling = item.value;
  r.location = diag.locate(item.node->source());
  if (item.value.empty()) {
    return diag.at(
        *item.node, "'" + std::string(key) + "' must not be empty",
        "write a script path such as \"scripts/ref.py\" or a callable \"package.module:function\"");
  }
  if (is_callable_spelling(item.value)) {
    const std::size_t colon = item.value.find(':');
    r.kind = Runnable::Kind::callable;
    r.module = item.value.substr(0, colon);
    r.function = item.value.substr(colon + 1);
    return r;
  }
  const fs::path written(item.value);
  const fs::path base = diag.base_dir(item.node->source());
  const fs::path resolved = (written.is_absolute() ? written : base / written).lexically_normal();
  std::error_code ec;
  if (!fs::is_regular_file(resolved, ec)) {
    const bool exists = fs::exists(resolved, ec);
    std::string hint = "paths are relative to " + base.string() +
                       "; a Python callable is written \"package.module:function\"";
    if (item.value.find(':') != std::string::npos) {
      hint = "\"" + item.value +
             "\" is not a valid callable: write \"package.module:function\" with Python "
             "identifiers, or a script path";
    }
    return diag.at(*item.node,
                   std::string(exists ? "script is not a regular file: '" : "script not found: '") +
                       item.value + "' (looked for " + resolved.string() + ")",
                   hint);
  }
  r.kind = Runnable::Kind::script;
  r.script = resolved;
  return r;
}

}  // namespace gpuemu::config
