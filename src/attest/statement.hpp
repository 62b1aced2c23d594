// The in-toto Statement v1 of a Kernel Correctness Report: subjects (op, reference and gpuemu
// binary by SHA-256) and a predicate holding what the run measured (docs/signed-report.md).
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "attest/dsse.hpp"
#include "util/error.hpp"

namespace gpuemu::attest {

namespace fs = std::filesystem;

inline constexpr std::string_view kStatementType = "https://in-toto.io/Statement/v1";
inline constexpr std::string_view kPayloadType = "application/vnd.in-toto+json";
inline constexpr std::string_view kPredicateType = "https://gpuemu.dev/kernel-correctness-report/v1";

// What a subject is, written into its in-toto annotations as "gpuemu.role". The tool binary
// is checked against --artifacts only when a copy of it is there (see verify.hpp).
enum class SubjectRole { op, reference, tool };
std::string_view subject_role_name(SubjectRole role);

// A file to name in the statement: `name` is repo-relative ("kernels/softmax.py") or, for
// the tool, "gpuemu"; `path` is where to read it now.
struct SubjectFile {
  std::string name;
  fs::path path;
  SubjectRole role = SubjectRole::op;
};

// The op and reference files under `root` (repo-relative names), plus the running gpuemu
// binary (`tool_binary`, platform::executable_path) as subject "gpuemu". Duplicates (one reference for many
// ops) collapse.
std::vector<SubjectFile> collect_subjects(const fs::path& root, const std::vector<std::string>& op_files,
                                          const std::vector<std::string>& reference_files,
                                          const fs::path& tool_binary);

// Builds the statement from a result.json document (docs/result-json.md). Every subject file
// is hashed now; a missing file or a malformed result is an error naming it.
Expected<nlohmann::json> build_statement(
    const nlohmann::json& result, const std::vector<SubjectFile>& subjects,
    std::chrono::system_clock::time_point signed_at = std::chrono::system_clock::now());

// Signs the statement as a DSSE envelope of type application/vnd.in-toto+json. The payload is
// the statement's compact JSON; invalid UTF-8 is replaced so serialisation cannot throw.
Expected<nlohmann::json> sign_statement(const nlohmann::json& statement, const Signer& signer);

// Checks a decoded statement's shape: _type, subjects with sha256 digests, predicateType and
// the predicate fields render_report reads. The message names the first bad field.
Expected<void> check_statement(const nlohmann::json& statement);

// "2024-05-01T12:00:00Z".
std::string utc_timestamp(std::chrono::system_clock::time_point time);

}  // namespace gpuemu::attest
