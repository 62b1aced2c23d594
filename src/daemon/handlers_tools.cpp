// calibrate (fit tolerances from a trusted implementation, as `gpuemu calibrate` without --write)
// and lint (PTX text from the client through the artifact lint, metrics recorded in the store).
#include <unistd.h>

#include <fmt/format.h>

#include <atomic>
#include <filesystem>
#include <fstream>

#include "artifact/lint.hpp"
#include "daemon/record_json.hpp"
#include "daemon/request_table.hpp"
#include "engine/calibrate.hpp"
#include "engine/plans.hpp"

namespace gpuemu::daemon {
namespace {

// The PTX text in a private temporary file for the lint, removed when this goes away.
class TempPtx {
 public:
  static Result<TempPtx> write(const std::string& text) {
    static std::atomic<int> counter{0};
    const auto path = std::filesystem::temp_directory_path() /
                      fmt::format("gpuemu-daemon-lint-{}-{}.ptx", ::getpid(), counter++);
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.flush()) {
      return reject(WireError::io, fmt::format("cannot write the PTX to {}; check TMPDIR", path.string()));
    }
    return TempPtx(path);
  }
  TempPtx(TempPtx&& other) noexcept : path_(std::exchange(other.path_, {})) {}
  TempPtx& operator=(TempPtx&&) = delete;
  ~TempPtx() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  explicit TempPtx(std::filesystem::path path) : path_(std::move(path)) {}
  std::filesystem::path path_;
};

// The [kernels.artifact_checks] of a configured kernel of that name, else the defaults.
config::ArtifactChecks checks_for(DaemonState& state, const Message& message,
                                  const std::optional<std::string>& name) {
  if (!name) return {};
  auto config = state.config(message.header);
  if (!config) return {};
  for (const auto& k : (*config)->kernels) {
    if (k.name == *name) return k.artifact_checks;
  }
  return {};
}

}  // namespace

Result<Reply> handle_calibrate(DaemonState& state, Message& message, const Fields& fields) {
  const auto config = TRY(state.config(message.header));
  const auto* op = TRY(state.op(*config, TRY(fields.string("op"))));
  engine::CalibrateOptions options;
  options.dtype = TRY(fields.optional_choice("dtype", tensor::parse_dtype, kDtypeChoices));
  options.iterations = static_cast<int>(TRY(fields.optional_int("iterations", 2, 100000)).value_or(50));
  options.master_seed = engine::resolve_master_seed(TRY(fields.optional_seed("seed")), *config);
  if (auto against = TRY(fields.optional_string("against")))
    options.against = TRY(runnable_field(*against, *config, "against"));
  const auto rows = TRY(engine::calibrate(*config, *op, options));
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : rows) out.push_back(engine::to_json(r));
  Reply reply;
  reply.header = {{"op", op->name}, {"seed", std::to_string(options.master_seed)}, {"rows", std::move(out)}};
  return reply;
}

Result<Reply> handle_lint(DaemonState& state, Message& message, const Fields& fields) {
  const auto ptx = TRY(fields.string("ptx"));
  if (ptx.find_first_not_of(" \t\r\n") == std::string::npos) {
    return reject(WireError::bad_request, "lint request: \"ptx\" is empty; send the PTX text of the kernel");
  }
  const auto kernel = TRY(fields.optional_string("kernel"));
  const auto arch = TRY(fields.optional_string("arch")).value_or("");
  const auto file = TRY(TempPtx::write(ptx));
  const auto tools = TRY(artifact::Toolchain::discover());
  artifact::Linter linter(tools);
  const auto reports = TRY(linter.lint_file(file.path(), arch, kernel, checks_for(state, message, kernel)));
  bool passed = true;
  nlohmann::json kernels = nlohmann::json::array();
  for (const auto& r : reports) {
    passed = passed && r.passed();
    auto doc = artifact::report_to_json(r, file.path().parent_path());
    doc["source"] = "<lint request>";
    doc["file"] = "<lint request>";
    doc["kernel_name"] = r.name;
    doc["timestamp"] = util::iso_time(util::now_millis());
    TRY(state.store().record_artifact_metrics(
        {.kernel = r.name, .source = "<lint request>", .metrics = doc["metrics"]}));
    kernels.push_back(std::move(doc));
  }
  Reply reply;
  reply.header = {{"kernels", std::move(kernels)},
                  {"passed", passed},
                  {"timestamp", util::iso_time(util::now_millis())},
                  {"tools", tools.to_json()}};
  return reply;
}

}  // namespace gpuemu::daemon
