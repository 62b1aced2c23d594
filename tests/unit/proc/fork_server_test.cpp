// Tests for the fork server (proc/fork_server.hpp) with real `python -m gpuemu.fork_server` and
// warm workers: who their parent is, the environment and numpy seed each gets, and what it refuses.
#include "proc/fork_server.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

#include <gtest/gtest.h>

#include "platform/process_exit.hpp"
#include "proc/warm_worker.hpp"
#include "proc_test_support.hpp"

namespace gpuemu::proc {
namespace {

using testing::callable;
using testing::simple_case;

double first_output(const config::Runnable& runnable, const RunnerSettings& settings,
                    nlohmann::json kwargs = {}) {
  WarmWorkerRunner runner(runnable, settings);
  testing::Case c = simple_case();
  if (!kwargs.is_null()) c.kwargs = std::move(kwargs);
  RunOutcome out = runner.run(c.request());
  EXPECT_TRUE(out.ok()) << out.message << "\n" << out.stderr_tail;
  return out.ok() ? out.outputs.at("out").to_doubles().at(0) : -2;
}

// Sets an environment variable for one test and puts the old value back.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(ForkServer, WorkersAreForksOfOneServerUnlessTurnedOff) {
  const auto parent = callable("warm_mod", "parent_pid");
  if (!platform::watches_process_exit()) {
    // No pidfd or kqueue (the portable paths): no server could be watched, so every worker is ours.
    EXPECT_FALSE(fork_server_enabled());
    EXPECT_EQ(first_output(parent, testing::settings("op")), static_cast<double>(::getpid()));
    return;
  }
  const double first = first_output(parent, testing::settings("op"));
  const double second = first_output(parent, testing::settings("reference"));
  EXPECT_EQ(first, second);  // one server for the interpreter
  EXPECT_NE(first, static_cast<double>(::getpid()));
  EXPECT_GT(first, 1);

  ScopedEnv off("GPUEMU_FORK_SERVER", "0");
  EXPECT_EQ(first_output(parent, testing::settings("op")), static_cast<double>(::getpid()));
}

TEST(ForkServer, EachWorkerGetsTheEnvironmentOfItsStart) {
  const auto env_value = callable("warm_mod", "env_value");
  first_output(env_value, testing::settings());  // the server exists before the variable does
  {
    ScopedEnv value("GPUEMU_TEST_VALUE", "5");
    EXPECT_EQ(first_output(env_value, testing::settings()), 5);
  }
  EXPECT_EQ(first_output(env_value, testing::settings()), -1);
  // A runner's own variables (here the Triton interpreter switch) reach its worker only.
  RunnerSettings interpreted = testing::settings();
  interpreted.triton_interpret = true;
  EXPECT_EQ(first_output(env_value, interpreted, {{"name", "TRITON_INTERPRET"}}), 1);
  EXPECT_EQ(first_output(env_value, testing::settings(), {{"name", "TRITON_INTERPRET"}}), 0);
}

TEST(ForkServer, EachWorkerDrawsItsOwnNumpySeed) {
  const auto draw = callable("warm_mod", "random_draw");
  EXPECT_NE(first_output(draw, testing::settings()), first_output(draw, testing::settings()));
}

TEST(ForkServer, OnlyWorkerCommandsInADirectoryThatExists) {
  SpawnSpec not_worker;
  not_worker.argv = {"python3", "-c", "pass"};
  EXPECT_FALSE(spawn_from_fork_server(not_worker, std::chrono::seconds(20)));

  SpawnSpec missing_dir;
  missing_dir.argv = {"python3", "-m", "gpuemu.worker", "--callable", "warm_mod:double"};
  missing_dir.cwd = "/nonexistent/gpuemu-fork-server-test";
  EXPECT_FALSE(spawn_from_fork_server(missing_dir, std::chrono::seconds(20)));
}

TEST(ForkServer, AnInterpreterThatCannotStartOneIsLeftToSpawnChild) {
  SpawnSpec spec;
  spec.argv = {"python3.99", "-m", "gpuemu.worker", "--callable", "warm_mod:double"};
  EXPECT_FALSE(spawn_from_fork_server(spec, std::chrono::seconds(20)));
  // A program that starts but never answers "ready" (here it exits at once).
  spec.argv[0] = "/bin/false";
  EXPECT_FALSE(spawn_from_fork_server(spec, std::chrono::seconds(20)));
}

// A server that dies mid-run (OOM killer, a stray kill) loses nothing: the worker it forked is
// still killed and replaced, and later workers are processes of our own.
TEST(ForkServer, AServerThatDiesMidRunIsReplacedBySpawningDirectly) {
  if (!platform::watches_process_exit()) GTEST_SKIP() << "no fork server without an exit watch";
  ScopedEnv own_server("PYTHONGPUEMUFORKTEST", "dies");  // a start-up variable: a server of its own
  WarmWorkerRunner runner(callable("warm_mod", "parent_pid"), testing::settings("op"));
  RunOutcome first = runner.run(simple_case().request());
  ASSERT_TRUE(first.ok()) << first.message << "\n" << first.stderr_tail;
  const auto server = static_cast<pid_t>(first.outputs.at("out").to_doubles().at(0));
  ASSERT_NE(server, ::getpid());
  ASSERT_EQ(::kill(server, SIGKILL), 0);
  ASSERT_TRUE(testing::process_gone(server));

  // The running worker (an orphan now) still serves; once recycled, its successor is ours.
  EXPECT_TRUE(runner.run(simple_case().request()).ok());
  const double after = first_output(callable("warm_mod", "parent_pid"), testing::settings("op"));
  EXPECT_EQ(after, static_cast<double>(::getpid()));
  // Found dead, the server was reaped at once: no zombie of ours for the rest of the run.
  int status = 0;
  EXPECT_EQ(::waitpid(server, &status, WNOHANG), -1);
}

}  // namespace
}  // namespace gpuemu::proc
