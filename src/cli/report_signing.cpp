// Signing a result.json as a Kernel Correctness Report (see report_signing.hpp): the subjects
// are the op and reference scripts of the ops the result names, from the config the run used.
#include "cli/report_signing.hpp"

#include <fmt/format.h>

#include <vector>

#include "attest/keys.hpp"
#include "attest/statement.hpp"
#include "platform/platform.hpp"
#include "util/atomic_file.hpp"
#include "util/json_text.hpp"

namespace gpuemu::cli {
namespace {

namespace fs = std::filesystem;

// The op and reference script files of every op in `result`, from the config the run used.
Expected<std::vector<attest::SubjectFile>> subjects_for(const nlohmann::json& result,
                                                        const config::Config& config, const fs::path& root) {
  if (result.value("config_digest", "") != config.digest) {
    return fail(ErrorKind::usage,
                fmt::format("result.json was made with config digest {}, but '{}' now has digest "
                            "{}: sign with the gpuemu.toml the run used (--config)",
                            result.value("config_digest", "?"), config.project_file.string(), config.digest));
  }
  std::vector<std::string> op_files;
  std::vector<std::string> reference_files;
  auto relative = [&](const fs::path& file) -> Expected<std::string> {
    auto rel = fs::weakly_canonical(file).lexically_relative(fs::weakly_canonical(root));
    if (rel.empty() || *rel.begin() == "..") {
      return fail(ErrorKind::usage,
                  fmt::format("'{}' lies outside the artifacts root '{}': pass the project root "
                              "as --artifacts-root",
                              file.string(), root.string()));
    }
    return rel.generic_string();
  };
  for (const auto& op : result.value("ops", nlohmann::json::array())) {
    const std::string name = op.value("op", "");
    const config::OpConfig* op_config = config.find_op(name);
    if (!op_config) {
      return fail(ErrorKind::usage,
                  fmt::format("op '{}' of result.json is not in '{}': sign with the gpuemu.toml "
                              "the run used (--config)",
                              name, config.project_file.string()));
    }
    // Callables (module:function) have no file of their own; they are not subjects.
    if (op_config->op_script.kind == config::Runnable::Kind::script) {
      op_files.push_back(TRY(relative(op_config->op_script.script)));
    }
    if (op_config->reference.kind == config::Runnable::Kind::script) {
      reference_files.push_back(TRY(relative(op_config->reference.script)));
    }
  }
  return attest::collect_subjects(root, op_files, reference_files, platform::executable_path());
}

}  // namespace

Expected<SignedReport> sign_result(const nlohmann::json& result, const config::Config& config,
                                   const fs::path& root, const fs::path& key_path,
                                   attest::KeyAccess key_access, const fs::path& out) {
  // The key first: a key that must not be used stops the command before any other work.
  auto key = TRY(attest::load_private_key(key_path, key_access));
  auto subjects = TRY(subjects_for(result, config, root));
  auto statement = TRY(attest::build_statement(result, subjects));
  auto envelope = TRY(attest::sign_statement(statement, attest::Ed25519Signer(key)));
  TRY(util::write_file_atomically(out, util::dump_json(envelope) + "\n"));
  return SignedReport{key.key_id(), subjects.size()};
}

}  // namespace gpuemu::cli
