// The scheme table behind open_store, tag and location rules, and the content check every
// fetched or pushed baseline passes.
#include "remote/baseline_store.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>

#include <nlohmann/json.hpp>

#include "remote/backends/backends.hpp"
#include "remote/redact.hpp"

extern char** environ;

namespace gpuemu::remote {
namespace {

struct SchemeRow {
  std::string_view scheme;
  Expected<std::unique_ptr<BaselineStore>> (*make)(const std::string& url, const StoreOptions& options);
};

const std::array kSchemes = {
    SchemeRow{"file", &make_file_store},
    SchemeRow{"http", &make_http_store},
    SchemeRow{"https", &make_http_store},
    SchemeRow{"s3", &make_s3_store},
    SchemeRow{"gh-artifact", &make_gh_artifact_store},
};

// What wrong content looks like, in words: its bytes are never quoted, since a store can hand
// back any file or page, and echoing one could leak a private page or a signed URL into CI logs.
std::string describe_content(std::string_view bytes) {
  if (bytes.empty()) return "an empty body";
  const auto first = std::find_if(bytes.begin(), bytes.end(),
                                  [](char c) { return !std::isspace(static_cast<unsigned char>(c)); });
  const auto binary = std::count_if(
      bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(bytes.size(), 512)),
      [](char c) {
        const auto u = static_cast<unsigned char>(c);
        return u < 0x20 && u != '\n' && u != '\r' && u != '\t';
      });
  if (binary > 0) return fmt::format("{} bytes of binary data", bytes.size());
  if (first != bytes.end() && *first == '<') {
    return fmt::format("{} bytes that look like HTML or XML, such as a login or error page", bytes.size());
  }
  return fmt::format("{} bytes of text that is not a JSON object", bytes.size());
}

}  // namespace

Env Env::process() {
  Env env;
  for (char** entry = environ; entry && *entry; ++entry) {
    std::string_view text(*entry);
    const auto eq = text.find('=');
    if (eq != std::string_view::npos)
      env.vars.emplace(std::string(text.substr(0, eq)), std::string(text.substr(eq + 1)));
  }
  return env;
}

std::optional<std::string> Env::get(std::string_view name) const {
  const auto it = vars.find(name);
  if (it == vars.end() || it->second.empty()) return std::nullopt;
  return it->second;
}

std::vector<std::string_view> known_schemes() {
  std::vector<std::string_view> out;
  for (const auto& row : kSchemes) out.push_back(row.scheme);
  return out;
}

Expected<std::unique_ptr<BaselineStore>> open_store(const std::string& url, const StoreOptions& options) {
  const auto sep = url.find("://");
  if (sep == std::string::npos) return make_file_store(url, options);
  std::string scheme = url.substr(0, sep);
  for (auto& c : scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const auto& row : kSchemes) {
    if (row.scheme == scheme) return row.make(url, options);
  }
  std::string names;
  for (const auto& row : kSchemes) names += fmt::format("{}{}://", names.empty() ? "" : ", ", row.scheme);
  return fail(ErrorKind::usage,
              fmt::format("baseline location '{}' has an unknown scheme '{}': use one of {} "
                          "or a local path",
                          redact_url(url), scheme, names));
}

Expected<void> check_tag(const std::string& tag) {
  const bool ok = !tag.empty() && tag.size() <= 128 && tag.front() != '.' &&
                  std::all_of(tag.begin(), tag.end(), [](unsigned char c) {
                    return std::isalnum(c) || c == '.' || c == '_' || c == '-';
                  });
  if (!ok) {
    return fail(ErrorKind::usage,
                fmt::format("baseline tag '{}' cannot name a file: use letters, digits, '.', "
                            "'_' and '-' (not starting with '.'), e.g. main or v1.2",
                            tag));
  }
  return {};
}

std::string location_for_tag(std::string_view base, const std::string& tag) {
  std::string location(base);
  if (const auto pos = location.find("{tag}"); pos != std::string::npos) {
    location.replace(pos, 5, tag);
    return location;
  }
  if (location.find('?') != std::string::npos || location.ends_with(".json")) return location;
  if (!location.ends_with('/')) location.push_back('/');
  return location + tag + ".json";
}

Expected<void> check_baseline_content(std::string_view bytes, std::string_view source) {
  const auto document = nlohmann::json::parse(bytes, nullptr, false);
  if (document.is_discarded() || !document.is_object()) {
    return fail(ErrorKind::parse,
                fmt::format("wrong content at {}: not a JSON baseline document ({}); check "
                            "that the URL points at a file written by gpuemu baseline export",
                            source, describe_content(bytes)));
  }
  if (!document.contains("schema_version")) {
    return fail(ErrorKind::parse,
                fmt::format("wrong content at {}: JSON without a \"schema_version\" field is not "
                            "a baseline document; push one written by gpuemu baseline export",
                            source));
  }
  return {};
}

}  // namespace gpuemu::remote
