// Tests for run_process (proc/process.hpp) against real children: large payloads both ways,
// children that never read stdin, hang, flood stderr or stdout, crash, or leave grandchildren.
#include "proc/process.hpp"

#include <sys/wait.h>

#include <gtest/gtest.h>

#include "proc_test_support.hpp"

namespace gpuemu::proc {
namespace {

using namespace std::chrono_literals;
using testing::script;

ProcessSpec python(const std::string& name) {
  ProcessSpec spec;
  spec.argv = {"python3", script(name).string()};
  spec.cwd = testing::source_dir();
  spec.timeout = 20s;
  return spec;
}

TEST(RunProcess, EchoesAPayloadLargerThanAnyPipeBuffer) {
  ProcessSpec spec;
  spec.argv = {"cat"};
  spec.stdin_data.assign(64u << 20, '\0');
  for (std::size_t i = 0; i < spec.stdin_data.size(); i += 4093)
    spec.stdin_data[i] = static_cast<char>(i % 251);
  auto r = run_process(spec);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_TRUE(r->stdout_data == spec.stdin_data);
}

TEST(RunProcess, ChildThatNeverReadsStdinDoesNotDeadlock) {
  ProcessSpec spec = python("no_stdin.py");
  spec.stdin_data.assign(64u << 20, 'x');
  auto r = run_process(spec);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_FALSE(r->timed_out);
  EXPECT_NE(r->stdout_data.find("\"shape\""), std::string::npos);
  EXPECT_LT(r->elapsed, 10s);
}

TEST(RunProcess, TimeoutKillsTheChild) {
  ProcessSpec spec;
  spec.argv = {"sleep", "1000"};
  spec.timeout = 300ms;
  auto r = run_process(spec);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->timed_out);
  EXPECT_FALSE(r->signaled);
  EXPECT_GE(r->elapsed, 300ms);
  EXPECT_LT(r->elapsed, 3s);
}

TEST(RunProcess, TimeoutKillsGrandchildrenToo) {
  auto pid_file = std::filesystem::temp_directory_path() / ("gpuemu_gc_" + std::to_string(::getpid()));
  ProcessSpec spec = python("hang_grandchild.py");
  spec.extra_env = {{"GRANDCHILD_PID_FILE", pid_file.string()}};
  spec.timeout = 1500ms;
  auto r = run_process(spec);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->timed_out);
  pid_t grandchild = testing::read_pid_file(pid_file);
  std::filesystem::remove(pid_file);
  ASSERT_GT(grandchild, 0) << "the script did not get to start its grandchild within the timeout";
  EXPECT_TRUE(testing::process_gone(grandchild));
}

TEST(RunProcess, GrandchildLeftBehindDoesNotKeepUsWaiting) {
  auto pid_file = std::filesystem::temp_directory_path() / ("gpuemu_gc2_" + std::to_string(::getpid()));
  ProcessSpec spec = python("leave_grandchild.py");
  spec.extra_env = {{"GRANDCHILD_PID_FILE", pid_file.string()}};
  spec.stdin_data = "{}";
  auto r = run_process(spec);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->exit_code, 0) << r->stderr_tail;
  EXPECT_FALSE(r->timed_out);
  EXPECT_LT(r->elapsed, 10s);
  EXPECT_NE(r->stdout_data.find("AACAPw=="), std::string::npos);
  pid_t grandchild = testing::read_pid_file(pid_file);
  std::filesystem::remove(pid_file);
  ASSERT_GT(grandchild, 0);
  EXPECT_TRUE(testing::process_gone(grandchild));
}

TEST(RunProcess, StderrTailIsBounded) {
  ProcessSpec spec = python("stderr_flood.py");
  spec.stderr_tail = 4096;
  auto r = run_process(spec);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_EQ(r->stderr_tail.size(), 4096u);
  EXPECT_TRUE(r->stderr_tail.ends_with("END-OF-STDERR\n"));
  EXPECT_EQ(r->stderr_bytes, 8u * 1024 * 1024 + 14);
}

TEST(RunProcess, StdoutOverflowKillsTheChild) {
  ProcessSpec spec = python("stdout_flood.py");
  spec.max_stdout = 1u << 20;
  auto r = run_process(spec);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->stdout_overflow);
  EXPECT_LE(r->stdout_data.size(), 1u << 20);
  EXPECT_LT(r->elapsed, 10s);
}

TEST(RunProcess, ReportsExitCodesAndSignals) {
  ProcessSpec exit3;
  exit3.argv = {"sh", "-c", "echo oops >&2; exit 3"};
  auto r = run_process(exit3);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_FALSE(r->signaled);
  EXPECT_EQ(r->stderr_tail, "oops\n");

  auto seg = run_process(python("segfault.py"));
  ASSERT_TRUE(seg);
  EXPECT_TRUE(seg->signaled);
  EXPECT_EQ(seg->signal, SIGSEGV);
  EXPECT_EQ(seg->exit_code, -1);
}

TEST(RunProcess, RunsInCwdWithExtraEnvironment) {
  ProcessSpec spec;
  spec.argv = {"sh", "-c", "pwd; echo \"$GPUEMU_TEST_VAR\"; echo \"$HOME\""};
  spec.cwd = testing::script_dir();
  spec.extra_env = {{"GPUEMU_TEST_VAR", "hello there"}, {"HOME", "/nowhere"}};
  auto r = run_process(spec);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->stdout_data, testing::script_dir().string() + "\nhello there\n/nowhere\n");
}

TEST(RunProcess, MissingProgramIsAnEnvironmentError) {
  ProcessSpec spec;
  spec.argv = {"python3.99"};
  auto r = run_process(spec);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ErrorKind::environment);
  EXPECT_EQ(r.error().message, "cannot start 'python3.99': not found on PATH");

  spec.argv = {"sh"};
  spec.cwd = "/no/such/dir";
  auto r2 = run_process(spec);
  ASSERT_FALSE(r2);
  EXPECT_EQ(r2.error().message, "cannot start 'sh': working directory /no/such/dir does not exist");
}

TEST(RunProcess, LeavesNoDescriptorsOrZombiesBehind) {
  ProcessSpec spec;
  spec.argv = {"sh", "-c", "cat; echo err >&2"};
  spec.stdin_data = "abc";
  (void)run_process(spec);  // warm up lazily opened descriptors
  const std::size_t before = testing::open_fd_count();
  for (int i = 0; i < 20; ++i) {
    auto r = run_process(spec);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->stdout_data, "abc");
  }
  ProcessSpec hang;
  hang.argv = {"sleep", "100"};
  hang.timeout = 50ms;
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(run_process(hang));
  EXPECT_EQ(testing::open_fd_count(), before);
  // Every child was reaped: none is a zombie (-1, ECHILD: no child at all; 0: children that still
  // run, such as the fork server an earlier test of this binary started).
  int status = 0;
  EXPECT_LE(::waitpid(-1, &status, WNOHANG), 0);
}

}  // namespace
}  // namespace gpuemu::proc
