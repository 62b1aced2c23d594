// Tests for ColdScriptRunner (proc/cold_runner.hpp): real python3 scripts that answer in both
// reply forms, crash, segfault, hang, print garbage or floods, or answer with bad tensors.
#include "proc/cold_runner.hpp"

#include <gtest/gtest.h>

#include "proc_test_support.hpp"

namespace gpuemu::proc {
namespace {

using namespace std::chrono_literals;
using testing::case_x;
using testing::simple_case;
using testing::vector_of;

RunOutcome run_script(const std::string& name, const testing::Case& c,
                      RunnerSettings s = testing::settings()) {
  ColdScriptRunner runner(testing::script_runnable(name), s);
  return runner.run(c.request());
}

TEST(ColdRunner, SingleTensorReplyWithKwargsAndStridedInput) {
  std::vector<double> values = {1, 2, 3, 4, 5, 6};
  auto x = tensor::Tensor::from_doubles(tensor::DType::float32, {2, 3}, values);
  testing::Case c = case_x(tensor::with_layout(x, tensor::Layout::transposed));
  c.kwargs = {{"scale", 3}};
  RunOutcome out = run_script("echo_single.py", c);
  ASSERT_TRUE(out.ok()) << out.message << "\n" << out.stderr_tail;
  ASSERT_EQ(out.outputs.count("out"), 1u);
  EXPECT_EQ(out.outputs["out"].shape, (tensor::Shape{2, 3}));
  EXPECT_EQ(out.outputs["out"].to_doubles(), (std::vector<double>{6, 12, 18, 24, 30, 36}));
}

TEST(ColdRunner, NamedOutputsReplyAndCaseDtype) {
  testing::Case c = simple_case();
  c.inputs["y"] = vector_of(tensor::DType::int64, {1});
  c.dtype = tensor::DType::bfloat16;
  RunOutcome out = run_script("echo_outputs.py", c);
  ASSERT_TRUE(out.ok()) << out.message << "\n" << out.stderr_tail;
  EXPECT_EQ(out.outputs["count"].to_doubles(), (std::vector<double>{2}));
  EXPECT_EQ(out.outputs["flag"].dtype, tensor::DType::bool_);
  EXPECT_EQ(out.outputs["flag"].to_doubles(), (std::vector<double>{1}));
}

TEST(ColdRunner, APlainProtocolScriptNamesBfloat16InABfloat16CaseOnly) {
  // The seed templates' np.dtype(t["dtype"]): numpy knows "bfloat16" in a bfloat16 case's process.
  testing::Case c =
      case_x(tensor::Tensor::from_doubles(tensor::DType::bfloat16, {3}, std::vector<double>{1, -2, 0.5}));
  c.dtype = tensor::DType::bfloat16;
  RunOutcome out = run_script("plain_dtype_name.py", c);
  ASSERT_TRUE(out.ok()) << out.message << "\n" << out.stderr_tail;
  EXPECT_EQ(out.outputs["out"].dtype, tensor::DType::bfloat16);
  EXPECT_EQ(out.outputs["out"].to_doubles(), (std::vector<double>{2, -4, 1}));
  EXPECT_EQ(out.outputs["hooked"].to_doubles(), (std::vector<double>{1}));
  // Other cases start as before: no start-up hook on the path.
  RunOutcome plain = run_script("plain_dtype_name.py", simple_case());
  ASSERT_TRUE(plain.ok()) << plain.message << "\n" << plain.stderr_tail;
  EXPECT_EQ(plain.outputs["hooked"].to_doubles(), (std::vector<double>{0}));
}

TEST(ColdRunner, CrashIsReportedWithItsStderr) {
  RunOutcome out = run_script("crash.py", simple_case());
  EXPECT_EQ(out.failure, RunFailure::crashed);
  EXPECT_EQ(out.message, "reference tests/scripts/run/crash.py exited with code 1");
  EXPECT_NE(out.stderr_tail.find("about to fail"), std::string::npos);
  EXPECT_NE(out.stderr_tail.find("RuntimeError: deliberate failure in crash.py"), std::string::npos);
}

TEST(ColdRunner, SegfaultIsACrash) {
  RunOutcome out = run_script("segfault.py", simple_case(), testing::settings("op"));
  EXPECT_EQ(out.failure, RunFailure::crashed);
  EXPECT_EQ(out.message, "op tests/scripts/run/segfault.py was killed by signal 11 (Segmentation fault)");
}

TEST(ColdRunner, HangTimesOut) {
  RunOutcome out = run_script("hang.py", simple_case(), testing::settings("op", 700ms));
  EXPECT_EQ(out.failure, RunFailure::timed_out);
  EXPECT_EQ(out.message,
            "op tests/scripts/run/hang.py timed out after 0.7 s; the whole process group was killed");
  EXPECT_LT(out.elapsed, 3s);
}

TEST(ColdRunner, GarbageIsBadOutputQuotingIt) {
  RunOutcome out = run_script("garbage.py", simple_case());
  EXPECT_EQ(out.failure, RunFailure::bad_output);
  EXPECT_EQ(
      out.message,
      "reference tests/scripts/run/garbage.py printed something other than one JSON reply on stdout (print "
      "logs to stderr): 'Loading weights... done\\nresult = 42\\n'");
}

TEST(ColdRunner, MegabytesOfStderrKeepOnlyTheTail) {
  RunnerSettings s = testing::settings();
  s.stderr_tail = 2048;
  RunOutcome out = run_script("stderr_flood.py", simple_case(), s);
  ASSERT_TRUE(out.ok()) << out.message;
  EXPECT_TRUE(out.stderr_tail.starts_with("[... 8386574 earlier bytes of stderr omitted ...]\n"))
      << out.stderr_tail.substr(0, 80);
  EXPECT_TRUE(out.stderr_tail.ends_with("END-OF-STDERR\n"));
  EXPECT_LT(out.stderr_tail.size(), 2200u);
}

TEST(ColdRunner, HugeStdoutIsCapped) {
  RunnerSettings s = testing::settings();
  s.max_output_bytes = 4u << 20;
  RunOutcome out = run_script("stdout_flood.py", simple_case(), s);
  EXPECT_EQ(out.failure, RunFailure::bad_output);
  EXPECT_EQ(
      out.message,
      "reference tests/scripts/run/stdout_flood.py printed more than 4194304 bytes on stdout and was killed");
}

TEST(ColdRunner, WrongLengthIsBadOutput) {
  RunOutcome out = run_script("wrong_length.py", simple_case());
  EXPECT_EQ(out.failure, RunFailure::bad_output);
  EXPECT_EQ(
      out.message,
      "the output of reference tests/scripts/run/wrong_length.py: \"data\" holds 8 bytes but shape [4] of "
      "float32 needs 16");
}

TEST(ColdRunner, WrongShapeAndDtypeAreReturnedForTheCheckToJudge) {
  RunOutcome out = run_script("wrong_shape.py", simple_case());
  ASSERT_TRUE(out.ok()) << out.message;
  EXPECT_EQ(out.outputs["out"].shape, (tensor::Shape{3, 2}));
  EXPECT_EQ(out.outputs["out"].dtype, tensor::DType::int32);
}

TEST(ColdRunner, ScriptThatNeverReadsA64MiBPayload) {
  std::vector<double> values(16u << 20, 0.25);  // 16 Mi float32 = 64 MiB, ~85 MiB of base64
  testing::Case c = case_x(vector_of(tensor::DType::float32, values));
  RunOutcome out = run_script("no_stdin.py", c);
  ASSERT_TRUE(out.ok()) << out.message;
  EXPECT_LT(out.elapsed, 15s);
}

TEST(ColdRunner, MissingInterpreterIsStartFailed) {
  RunnerSettings s = testing::settings();
  s.python = "python3.99";
  RunOutcome out = run_script("echo_single.py", simple_case(), s);
  EXPECT_EQ(out.failure, RunFailure::start_failed);
  EXPECT_EQ(out.message,
            "python interpreter 'python3.99' not found: set [validation] python or GPUEMU_PYTHON");
}

TEST(ColdRunner, RunsInTheProjectRootWithPythonPath) {
  RunnerSettings s = testing::settings();
  s.python_path = {"/opt/gpuemu-test-path"};
  ::setenv("EXPECT_CWD", testing::source_dir().c_str(), 1);
  ::setenv("EXPECT_PATH", "/opt/gpuemu-test-path", 1);
  RunOutcome out = run_script("env_probe.py", simple_case(), s);
  ASSERT_TRUE(out.ok()) << out.message << out.stderr_tail;
  EXPECT_EQ(out.outputs["out"].to_doubles(), (std::vector<double>{1.0}));
}

TEST(ColdRunner, MakeRunnerPicksColdForPlainScripts) {
  auto runner = make_runner(testing::script_runnable("echo_single.py"), testing::settings());
  ASSERT_NE(runner, nullptr);
  EXPECT_NE(dynamic_cast<ColdScriptRunner*>(runner.get()), nullptr);
  EXPECT_EQ(make_runner(config::Runnable{}, testing::settings()), nullptr);
}

}  // namespace
}  // namespace gpuemu::proc
