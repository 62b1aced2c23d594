// Emulates a GitHub Actions runner: GITHUB_* point at temporary files, the emitter runs, and the
// test reads back annotations (count, order, escaping), the step outputs (heredoc syntax, parsed as
// the runner does) and the job summary.
#include "github/publish.hpp"

#include <cstdlib>
#include <map>
#include <regex>
#include <sstream>

#include <gtest/gtest.h>

#include "../report/test_support.hpp"
#include "report/writer.hpp"

namespace gpuemu::github {
namespace {

using testing::load_fixture;
using testing::read_file;

// The runner's decoding of command data and properties.
std::string unescape(std::string text) {
  for (auto [from, to] : {std::pair{"%0D", "\r"}, {"%0A", "\n"}, {"%3A", ":"}, {"%2C", ","}, {"%25", "%"}}) {
    for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + 1)) {
      text.replace(at, 3, to);
    }
  }
  return text;
}

struct Command {
  std::string name;
  std::map<std::string, std::string> properties;
  std::string message;
};

// Parses the log like the runner: "::name k=v,k=v::message" lines, skipping stopped regions.
std::vector<Command> parse_commands(const std::string& log) {
  std::vector<Command> commands;
  std::istringstream lines(log);
  std::string stopped;
  for (std::string line; std::getline(lines, line);) {
    if (!stopped.empty()) {
      if (line == "::" + stopped + "::") stopped.clear();
      continue;
    }
    std::smatch m;
    if (!std::regex_match(line, m, std::regex("::([a-z-]+)(?: ([^:]*))?::(.*)"))) continue;
    Command c{m[1], {}, unescape(m[3])};
    std::istringstream props(m[2].str());
    for (std::string prop; std::getline(props, prop, ',');) {
      auto eq = prop.find('=');
      c.properties[prop.substr(0, eq)] = unescape(prop.substr(eq + 1));
    }
    if (c.name == "stop-commands") stopped = c.message;
    commands.push_back(c);
  }
  return commands;
}

// GITHUB_OUTPUT as the runner reads it: "name<<DELIM", value lines, "DELIM".
std::map<std::string, std::string> parse_outputs(const std::string& text) {
  std::map<std::string, std::string> outputs;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    auto marker = line.find("<<");
    if (marker == std::string::npos) {
      ADD_FAILURE() << "not heredoc syntax: " << line;
      continue;
    }
    std::string name = line.substr(0, marker), delimiter = line.substr(marker + 2), value;
    bool closed = false;
    for (std::string body; std::getline(lines, body);) {
      if (body == delimiter) {
        closed = true;
        break;
      }
      value += (value.empty() ? "" : "\n") + body;
    }
    EXPECT_TRUE(closed) << name;
    outputs[name] = value;
  }
  return outputs;
}

class Runner : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("GITHUB_ACTIONS", "true", 1);
    setenv("GITHUB_WORKSPACE", "/work/ws", 1);
    setenv("GITHUB_STEP_SUMMARY", (dir_ / "step_summary").c_str(), 1);
    setenv("GITHUB_OUTPUT", (dir_ / "output").c_str(), 1);
  }
  void TearDown() override {
    for (const char* name : {"GITHUB_ACTIONS", "GITHUB_WORKSPACE", "GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT"}) {
      unsetenv(name);
    }
  }
  std::string run(const nlohmann::json& result) {
    std::ostringstream log;
    auto env = read_environment();
    EXPECT_TRUE(env.actions);
    auto published = publish(testing::decode(result), env, log, {.result_path = "/work/ws/out/result.json"});
    EXPECT_TRUE(published.has_value()) << published.error().message;
    return log.str();
  }
  testing::TempDir dir_;
};

TEST_F(Runner, AnnotatesWorstFirstWithReplay) {
  auto commands = parse_commands(run(load_fixture("failing.json")));
  std::vector<Command> errors;
  for (const auto& c : commands) {
    if (c.name == "error") errors.push_back(c);
  }
  ASSERT_EQ(errors.size(), 5u);
  EXPECT_EQ(errors[0].properties["title"], "gpuemu layernorm[float32]: unexpected NaN/Inf");
  EXPECT_FALSE(errors[0].properties.contains("file"));  // layernorm names no source
  EXPECT_EQ(errors[1].properties["file"], "kernels/softmax.py");
  EXPECT_EQ(errors[1].properties["line"], "12");
  EXPECT_EQ(errors[1].message,
            "3 of 10 cases failed. seed 18446744073709551615: nonfinite_mismatch: out[1, 0] is NaN where the "
            "reference is 0.015\nReplay: gpuemu reproduce 18446744073709551615 --op softmax");
  EXPECT_EQ(errors[2].properties["file"], "kernels/matmul.cu");  // repo-relative to GITHUB_WORKSPACE
  EXPECT_EQ(errors[2].properties["line"], "42");
  EXPECT_EQ(errors[3].properties["title"], "gpuemu matmul[float16]: wrong output shape");
  EXPECT_EQ(errors[4].properties["title"], "gpuemu gelu[float32]: regression against baseline");
  EXPECT_EQ(errors[4].message, "max_ulp grew from 1 to 2 (x2.0)");
  for (const auto& c : commands) EXPECT_NE(c.name, "notice");
}

TEST_F(Runner, EscapesUntrustedTextInAnnotations) {
  auto result = load_fixture("failing.json");
  result["ops"][1]["failures"][0]["message"] = "100% bad\r\n::error::forged, a:b";
  std::string log = run(result);
  EXPECT_NE(
      log.find(
          "seed 100: 100%25 bad%0D%0A::error::forged, a:b%0AReplay: gpuemu reproduce 100 --op layernorm\n"),
      std::string::npos)
      << log;
  auto commands = parse_commands(log);
  EXPECT_EQ(commands[0].message,
            "3 of 6 cases failed. seed 100: 100% bad\r\n::error::forged, a:b\nReplay: gpuemu "
            "reproduce 100 --op layernorm");
}

TEST_F(Runner, AtMostTenErrorsThenOneNotice) {
  auto result = load_fixture("failing.json");
  auto model = result["ops"][3];  // softmax: one failing dtype
  for (int i = 0; i < 9; ++i) {
    auto op = model;
    op["op"] = "extra" + std::to_string(i);
    for (auto& f : op["failures"]) f["tolerance_used"] = i;  // numeric kinds, less and less bad
    result["ops"].push_back(op);
  }
  auto commands = parse_commands(run(result));
  std::vector<std::string> names;
  for (const auto& c : commands) names.push_back(c.name);
  EXPECT_EQ(std::count(names.begin(), names.end(), "error"), 10);
  ASSERT_EQ(std::count(names.begin(), names.end(), "notice"), 1);
  auto notice = *std::find_if(commands.begin(), commands.end(), [](auto& c) { return c.name == "notice"; });
  EXPECT_EQ(
      notice.message,
      "4 more failing (op, dtype) pairs not annotated (GitHub shows 10 per step); see the job summary or "
      "result.json");
  // The notice follows the last error.
  EXPECT_EQ(std::find(names.begin(), names.end(), "notice") - names.begin(), 10);
}

TEST_F(Runner, ScriptOutputIsEchoedWithCommandsStopped) {
  auto result = load_fixture("failing.json");
  result["ops"][3]["failures"][1]["stderr"] = "boom\n::error::forged from stderr\n::set-output name=x::y\n";
  std::string log = run(result);
  std::smatch m;
  ASSERT_TRUE(
      std::regex_search(log, m,
                        std::regex("::group::stderr of softmax\\[float16\\] \\(seed 18446744073709551615\\)\n"
                                   "::stop-commands::([0-9a-f]{32})\nboom\n::error::forged from stderr\n"
                                   "::set-output name=x::y\n::([0-9a-f]{32})::\n::endgroup::\n")))
      << log;
  EXPECT_EQ(m[1], m[2]);
  for (const auto& c : parse_commands(log)) EXPECT_NE(c.message, "forged from stderr");
  // A new token every time: printed text can never predict it.
  std::smatch again;
  std::string second = run(result);
  ASSERT_TRUE(std::regex_search(second, again, std::regex("::stop-commands::([0-9a-f]{32})")));
  EXPECT_NE(m[1], again[1]);
}

TEST_F(Runner, WritesOutputsAsHeredocs) {
  run(load_fixture("failing.json"));
  std::string text = read_file(dir_ / "output");
  auto outputs = parse_outputs(text);
  EXPECT_EQ(outputs,
            (std::map<std::string, std::string>{
                {"passed", "false"}, {"failed", "12"}, {"not_run", "0"}, {"result", "out/result.json"}}));
  EXPECT_TRUE(
      std::regex_search(text, std::regex("^passed<<gpuemu_[0-9a-f]{32}\nfalse\ngpuemu_[0-9a-f]{32}\n")));

  run(load_fixture("passing.json"));  // appended: later values win, as on the runner
  outputs = parse_outputs(read_file(dir_ / "output"));
  EXPECT_EQ(outputs["passed"], "true");
  EXPECT_EQ(outputs["failed"], "0");
}

TEST_F(Runner, AppendsTheSummary) {
  testing::write_file(dir_ / "step_summary", "# Earlier step\n");
  auto result = load_fixture("failing.json");
  run(result);
  std::string summary = read_file(dir_ / "step_summary");
  EXPECT_TRUE(summary.starts_with("# Earlier step\n\n## ❌ gpuemu: 4 of 6 checks failed\n")) << summary;
  EXPECT_EQ(summary.substr(15), "\n" + report::render(result, "markdown", {.workspace = "/work/ws"}).value());
}

TEST_F(Runner, SummaryRespectsWhatTheStepAlreadyWrote) {
  testing::write_file(dir_ / "step_summary", std::string(report::kSummaryLimit - 3000, 'x'));
  run(load_fixture("failing.json"));
  std::string summary = read_file(dir_ / "step_summary");
  EXPECT_LT(summary.size(), report::kSummaryLimit);
  EXPECT_NE(summary.find("**Truncated:**"), std::string::npos);
}

TEST_F(Runner, UnwritableFilesAreNamedInTheError) {
  setenv("GITHUB_OUTPUT", "/nonexistent-dir/output", 1);
  std::ostringstream log;
  auto published = publish(testing::decode(load_fixture("passing.json")), read_environment(), log);
  ASSERT_FALSE(published.has_value());
  EXPECT_EQ(published.error().kind, ErrorKind::io);
  EXPECT_TRUE(
      published.error().message.starts_with("GITHUB_OUTPUT=/nonexistent-dir/output: cannot append (No such "
                                            "file or directory)"))
      << published.error().message;
}

TEST(Environment, OutsideActions) {
  unsetenv("GITHUB_ACTIONS");
  unsetenv("GITHUB_OUTPUT");
  auto env = read_environment();
  EXPECT_FALSE(env.actions);
  EXPECT_TRUE(env.output.empty());
}

}  // namespace
}  // namespace gpuemu::github
