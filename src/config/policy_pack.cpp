// apply_policy_pack: finds a bundled pack or reads a pack file, checks it with the same section
// parsers and diagnostics as gpuemu.toml, and lays its [policies] and [ci] keys over the Config.
#include "config/policy_pack.hpp"

#include <system_error>
#include <vector>

#include "config/config_json.hpp"
#include "config/diagnostic.hpp"
#include "config/loader.hpp"
#include "config/sections.hpp"
#include "util/read_file.hpp"
#include "util/suggest.hpp"

namespace gpuemu::config {

namespace {

std::vector<std::string_view> bundled_names() {
  std::vector<std::string_view> names;
  for (const BundledPolicyPack& pack : bundled_policy_packs()) names.push_back(pack.name);
  return names;
}

const BundledPolicyPack* find_bundled(std::string_view name) {
  for (const BundledPolicyPack& pack : bundled_policy_packs()) {
    if (pack.name == name) return &pack;
  }
  return nullptr;
}

// A word without a slash or a .toml suffix names a bundled pack; anything else is a path.
bool looks_like_path(std::string_view text) {
  return text.find('/') != std::string_view::npos || text.ends_with(".toml");
}

std::string choices_hint() {
  const std::vector<std::string_view> names = bundled_names();
  return "bundled packs are " + util::quoted_list(names) +
         "; or give the path of a TOML file (docs/policies.md)";
}

Expected<std::string> read_pack_file(const std::string& path) {
  auto text = util::read_text_file(path, "the policy pack file",
                                   {kMaxConfigFileBytes, util::Symlinks::follow, ErrorKind::config});
  if (!text) {
    return fail(ErrorKind::config, path + ": error: " + text.error().message + "\nhint: " + choices_hint());
  }
  return text;
}

// The top level of a pack holds [policies] and [ci] only: project settings stay in gpuemu.toml.
Expected<void> check_top_level(const Diagnostics& diag, const toml::table& root) {
  static constexpr std::string_view kAllowed[] = {"policies", "ci"};
  for (const toml::key* key : keys_in_file_order(root)) {
    if (key->str() == "policies" || key->str() == "ci") continue;
    std::string hint = util::did_you_mean(key->str(), kAllowed);
    if (hint.empty()) {
      hint = "a policy pack sets only [policies] and [ci]; other settings belong in gpuemu.toml";
    }
    return diag.at(*key, "unknown key '" + std::string(key->str()) + "' in a policy pack", hint);
  }
  if (root.empty()) {
    return diag.at(toml::source_region{}, "the policy pack sets nothing",
                   "add a [policies] table (and optionally [ci]); see docs/policies.md");
  }
  return {};
}

}  // namespace

Expected<void> apply_policy_pack_text(Config& config, std::string_view text, const std::string& display) {
  Diagnostics diag;
  diag.add_file(display, fs::absolute(display).lexically_normal(), std::string(text));
  diag.set_project_display(display);
  toml::table root;
  try {
    root = toml::parse(text, std::string_view(display));
  } catch (const toml::parse_error& e) {
    return diag.at(e.source(), "TOML syntax: " + std::string(e.description()));
  }
  TRY(check_top_level(diag, root));
  // Parse both sections before touching `config`, so a bad pack leaves it as it was.
  PolicyConfig policies = TRY(parse_policies(diag, root, config.policies));
  CiConfig ci = TRY(parse_ci(diag, root, config.ci));
  config.policies = std::move(policies);
  config.ci = std::move(ci);
  config.digest = config_digest(config);
  return {};
}

Expected<void> apply_policy_pack(Config& config, const std::string& name_or_path) {
  if (name_or_path.empty()) {
    return fail(ErrorKind::config, "the policy pack name is empty\nhint: " + choices_hint());
  }
  if (const BundledPolicyPack* pack = find_bundled(name_or_path)) {
    return apply_policy_pack_text(config, pack->text, std::string(pack->file));
  }
  std::error_code ec;
  if (!looks_like_path(name_or_path) && !fs::exists(name_or_path, ec)) {
    const std::vector<std::string_view> names = bundled_names();
    const std::string suggestion = util::did_you_mean(name_or_path, names);
    return fail(ErrorKind::config, "unknown policy pack '" + name_or_path + "'\nhint: " +
                                       (suggestion.empty() ? "" : suggestion + " ") + choices_hint());
  }
  const std::string text = TRY(read_pack_file(name_or_path));
  return apply_policy_pack_text(config, text, name_or_path);
}

}  // namespace gpuemu::config
