// Tests for WarmWorkerRunner (proc/warm_worker.hpp) with real `python -m gpuemu.worker`
// processes: many cases per worker, errors, crashes, hangs, recycling, cold/warm equality and the
// thread pools' sizes.
#include "proc/warm_worker.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <thread>

#include <gtest/gtest.h>

#include "proc/cold_runner.hpp"
#include "proc_test_support.hpp"

namespace gpuemu::proc {
namespace {

using namespace std::chrono_literals;
using testing::callable;
using testing::case_x;
using testing::simple_case;
using testing::vector_of;

TEST(WarmWorker, CallableServesManyCasesFromOneWorker) {
  WarmWorkerRunner runner(callable("warm_mod", "double"), testing::settings());
  for (int i = 0; i < 30; ++i) {
    testing::Case c = simple_case(i);
    c.kwargs = {{"scale", 2}};
    RunOutcome out = runner.run(c.request());
    ASSERT_TRUE(out.ok()) << out.message << "\n" << out.stderr_tail;
    EXPECT_EQ(out.outputs["out"].dtype, tensor::DType::float64);
    EXPECT_EQ(out.outputs["out"].to_doubles(), (std::vector<double>{4.0 * i, 8, 12}));
  }
  EXPECT_EQ(runner.workers_started(), 1);
}

// The dtype name a dtype_seen callable or script replied with (its output is the name's characters).
std::string seen_dtype(const RunOutcome& out) {
  std::string name;
  for (double c : out.outputs.at("out").to_doubles()) name += static_cast<char>(c);
  return name;
}

TEST(WarmWorker, NumpyBfloat16FormReachesTheCallable) {
  testing::Case c = case_x(vector_of(tensor::DType::bfloat16, {1.5, -2}));
  c.dtype = tensor::DType::bfloat16;
  for (auto [form, expected] : {std::pair{config::NumpyBfloat16::ml_dtypes, "bfloat16"},
                                std::pair{config::NumpyBfloat16::float32, "float32"}}) {
    RunnerSettings s = testing::settings("op");
    s.numpy_bfloat16 = form;
    WarmWorkerRunner warm(callable("warm_mod", "dtype_seen"), s);
    const auto args = warm.worker_args();
    const auto flag = std::find(args.begin(), args.end(), "--numpy-bfloat16");
    ASSERT_NE(flag, args.end());
    EXPECT_EQ(*(flag + 1), config::numpy_bfloat16_name(form));
    RunOutcome out = warm.run(c.request());
    ASSERT_TRUE(out.ok()) << out.message << "\n" << out.stderr_tail;
    EXPECT_EQ(seen_dtype(out), expected);
    // A cold script through gpuemu.script gets the same form from its request.
    ColdScriptRunner cold(testing::script_runnable("dtype_seen.py"), s);
    out = cold.run(c.request());
    ASSERT_TRUE(out.ok()) << out.message << "\n" << out.stderr_tail;
    EXPECT_EQ(seen_dtype(out), expected);
  }
}

TEST(WarmWorker, DictOfOutputs) {
  WarmWorkerRunner runner(callable("warm_mod", "pair"), testing::settings());
  RunOutcome out = runner.run(simple_case().request());
  ASSERT_TRUE(out.ok()) << out.message << "\n" << out.stderr_tail;
  EXPECT_EQ(out.outputs["sum"].to_doubles(), (std::vector<double>{6}));
  EXPECT_EQ(out.outputs["shape"].to_doubles(), (std::vector<double>{3}));
}

TEST(WarmWorker, OpSeesTheRealStridedLayout) {
  auto x = tensor::Tensor::from_doubles(tensor::DType::float32, {4, 5}, std::vector<double>(20, 1.0));
  testing::Case c = case_x(tensor::with_layout(x, tensor::Layout::strided, 3));
  WarmWorkerRunner runner(callable("warm_mod", "strides"), testing::settings("op"));
  RunOutcome out = runner.run(c.request());
  ASSERT_TRUE(out.ok()) << out.message << "\n" << out.stderr_tail;
  EXPECT_EQ(out.outputs["out"].to_doubles(), (std::vector<double>{8, 1}));
}

TEST(WarmWorker, ExceptionFailsTheCaseButTheWorkerLivesOn) {
  WarmWorkerRunner boom(callable("warm_mod", "boom"), testing::settings());
  testing::Case c = simple_case();
  c.kwargs = {{"n", 7}};
  RunOutcome out = boom.run(c.request());
  EXPECT_EQ(out.failure, RunFailure::crashed);
  EXPECT_EQ(out.message, "reference warm_mod:boom raised ValueError: boom 7");
  EXPECT_NE(out.stderr_tail.find("Traceback (most recent call last)"), std::string::npos);
  const pid_t pid = boom.worker_pid();
  EXPECT_GT(pid, 0);
  RunOutcome again = boom.run(c.request());
  EXPECT_EQ(again.failure, RunFailure::crashed);
  EXPECT_EQ(boom.worker_pid(), pid);
  EXPECT_EQ(boom.workers_started(), 1);
}

TEST(WarmWorker, CrashedWorkerIsRestarted) {
  WarmWorkerRunner runner(callable("warm_mod", "die"), testing::settings("op"));
  RunOutcome out = runner.run(simple_case().request());
  EXPECT_EQ(out.failure, RunFailure::crashed);
  EXPECT_EQ(
      out.message,
      "op warm_mod:die worker exited with code 7 during the case; a new worker starts for the next case");
  EXPECT_EQ(runner.worker_pid(), -1);
  RunOutcome second = runner.run(simple_case().request());
  EXPECT_EQ(second.failure, RunFailure::crashed);
  EXPECT_EQ(runner.workers_started(), 2);

  WarmWorkerRunner seg(callable("warm_mod", "segfault"), testing::settings("op"));
  RunOutcome s = seg.run(simple_case().request());
  EXPECT_EQ(s.failure, RunFailure::crashed);
  EXPECT_EQ(s.message,
            "op warm_mod:segfault worker was killed by signal 11 (Segmentation fault) during the case; a new "
            "worker "
            "starts for the next case");
}

TEST(WarmWorker, HungWorkerIsKilledAtTheTimeoutWithItsGrandchildren) {
  auto pid_file = std::filesystem::temp_directory_path() / ("gpuemu_wgc_" + std::to_string(::getpid()));
  ::setenv("GRANDCHILD_PID_FILE", pid_file.c_str(), 1);
  WarmWorkerRunner runner(callable("warm_mod", "hang_with_grandchild"), testing::settings("op", 4s));
  RunOutcome out = runner.run(simple_case().request());
  EXPECT_EQ(out.failure, RunFailure::timed_out);
  // Asked before the kill, the worker said where it was: time.sleep, line 48 of warm_mod.py.
  const std::string stopped = "warm_mod.py:48 in hang_with_grandchild";
  EXPECT_TRUE(out.message.starts_with("op warm_mod:hang_with_grandchild timed out after 4.0 s, stopped at "))
      << out.message;
  EXPECT_TRUE(
      out.message.ends_with(stopped +
                            "; the worker's whole process group was killed and a new worker starts for "
                            "the next case"))
      << out.message;
  EXPECT_EQ(runner.worker_pid(), -1);
  pid_t grandchild = testing::read_pid_file(pid_file);
  std::filesystem::remove(pid_file);
  ASSERT_GT(grandchild, 0);
  EXPECT_TRUE(testing::process_gone(grandchild));
}

TEST(WarmWorker, EachHangGetsAFreshWorker) {
  WarmWorkerRunner runner(callable("warm_mod", "hang"), testing::settings("op", 3s));
  auto start = std::chrono::steady_clock::now();
  RunOutcome out = runner.run(simple_case().request());
  EXPECT_EQ(out.failure, RunFailure::timed_out);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 8s);
  RunOutcome again = runner.run(simple_case().request());
  EXPECT_EQ(again.failure, RunFailure::timed_out);
  EXPECT_EQ(runner.workers_started(), 2);
}

TEST(WarmWorker, RecycledAfterMaxCases) {
  RunnerSettings s = testing::settings();
  s.worker_max_cases = 3;
  WarmWorkerRunner runner(callable("warm_mod", "pid"), s);
  std::vector<double> pids;
  for (int i = 0; i < 7; ++i) {
    RunOutcome out = runner.run(simple_case().request());
    ASSERT_TRUE(out.ok()) << out.message << out.stderr_tail;
    pids.push_back(out.outputs["out"].to_doubles()[0]);
  }
  EXPECT_EQ(runner.workers_started(), 3);
  EXPECT_EQ(pids[0], pids[2]);
  EXPECT_NE(pids[2], pids[3]);
  EXPECT_EQ(pids[3], pids[5]);
  EXPECT_NE(pids[5], pids[6]);
}

TEST(WarmWorker, PrintsGoToStderrNotIntoTheFrames) {
  WarmWorkerRunner runner(callable("warm_mod", "chatty"), testing::settings());
  for (int i = 0; i < 2; ++i) {
    RunOutcome out = runner.run(simple_case().request());
    ASSERT_TRUE(out.ok()) << out.message << out.stderr_tail;
    EXPECT_EQ(out.stderr_tail, "chatty says hello on stdout\nchatty says hello on stderr\n");
  }
}

TEST(WarmWorker, StdinIsEmptyForUserCode) {
  WarmWorkerRunner runner(callable("warm_mod", "read_stdin"), testing::settings());
  RunOutcome out = runner.run(simple_case().request());
  ASSERT_TRUE(out.ok()) << out.message << out.stderr_tail;
  EXPECT_EQ(out.outputs["out"].to_doubles(), (std::vector<double>{0}));
}

TEST(WarmWorker, StderrFloodIsDrainedAndBounded) {
  RunnerSettings s = testing::settings();
  s.stderr_tail = 1024;
  WarmWorkerRunner runner(callable("warm_mod", "flood_stderr"), s);
  RunOutcome out = runner.run(simple_case().request());
  ASSERT_TRUE(out.ok()) << out.message;
  EXPECT_TRUE(out.stderr_tail.ends_with("END-OF-STDERR\n"));
  EXPECT_LT(out.stderr_tail.size(), 1100u);
}

TEST(WarmWorker, LargePayloadBothWays) {
  std::vector<double> values(16u << 20, 0.5);  // 64 MiB of float32
  testing::Case c = case_x(vector_of(tensor::DType::float32, values));
  WarmWorkerRunner runner(callable("warm_mod", "mutate"), testing::settings());
  RunOutcome out = runner.run(c.request());
  ASSERT_TRUE(out.ok()) << out.message << out.stderr_tail;
  EXPECT_EQ(out.outputs["out"].numel(), 16 << 20);
  EXPECT_EQ(out.outputs["out"].get(12345), 1.5);
}

TEST(WarmWorker, LoadFailuresAreReportedPerCase) {
  WarmWorkerRunner missing(callable("import_error", "fn"), testing::settings());
  RunOutcome out = missing.run(simple_case().request());
  EXPECT_EQ(out.failure, RunFailure::crashed);
  EXPECT_EQ(out.message,
            "reference import_error:fn could not be loaded: ModuleNotFoundError: No module named "
            "'module_that_does_not_exist'");
  EXPECT_NE(out.stderr_tail.find("Traceback"), std::string::npos);

  WarmWorkerRunner no_attr(callable("warm_mod", "nope"), testing::settings());
  EXPECT_EQ(no_attr.run(simple_case().request()).message,
            "reference warm_mod:nope could not be loaded: AttributeError: module 'warm_mod' has no attribute "
            "'nope'");
  WarmWorkerRunner not_fn(callable("warm_mod", "not_callable"), testing::settings());
  EXPECT_EQ(not_fn.run(simple_case().request()).message,
            "reference warm_mod:not_callable could not be loaded: TypeError: warm_mod:not_callable is a int, "
            "not a function");
}

// warm_up starts the worker without waiting for it; the first run uses that worker, and counts only
// the part of its import after the run began (without that, the load's span would start before it).
TEST(WarmWorker, WarmUpStartsTheWorkerTheFirstRunUses) {
  WarmWorkerRunner runner(callable("warm_mod", "double"), testing::settings());
  runner.warm_up();
  const pid_t pid = runner.worker_pid();
  EXPECT_GT(pid, 0);
  runner.warm_up();  // a worker is there: nothing more starts
  EXPECT_EQ(runner.worker_pid(), pid);
  std::this_thread::sleep_for(300ms);  // it imports meanwhile
  const auto before = std::chrono::steady_clock::now();
  testing::Case c = simple_case(1);
  c.kwargs = {{"scale", 2}};
  RunOutcome out = runner.run(c.request());
  ASSERT_TRUE(out.ok()) << out.message << "\n" << out.stderr_tail;
  EXPECT_EQ(out.outputs["out"].to_doubles(), (std::vector<double>{4, 8, 12}));
  EXPECT_EQ(runner.worker_pid(), pid);
  EXPECT_EQ(runner.workers_started(), 1);
  ASSERT_FALSE(out.spans.empty());
  for (const auto& span : out.spans) EXPECT_GE(span.from, before);
}

// What goes wrong while a warmed-up worker starts is the first run's outcome, as without warm_up.
TEST(WarmWorker, AFailedStartAfterWarmUpIsTheFirstRunsOutcome) {
  WarmWorkerRunner missing(callable("import_error", "fn"), testing::settings());
  missing.warm_up();
  RunOutcome out = missing.run(simple_case().request());
  EXPECT_EQ(out.failure, RunFailure::crashed);
  EXPECT_EQ(out.message,
            "reference import_error:fn could not be loaded: ModuleNotFoundError: No module named "
            "'module_that_does_not_exist'");
  EXPECT_NE(out.stderr_tail.find("Traceback"), std::string::npos);

  RunnerSettings s = testing::settings();
  s.python = "python3.99";
  WarmWorkerRunner no_python(callable("warm_mod", "double"), s);
  no_python.warm_up();
  EXPECT_EQ(no_python.worker_pid(), -1);
  EXPECT_EQ(no_python.run(simple_case().request()).failure, RunFailure::start_failed);
}

// The sizes of the workers' thread pools (RunnerSettings::pool_threads), unless gpuemu's own
// environment sized any of them.
TEST(WarmWorker, ThreadPoolSizesReachTheWorker) {
  for (const char* name :
       {"OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "GOTO_NUM_THREADS"}) {
    if (std::getenv(name)) GTEST_SKIP() << name << " is set in this test's environment";
  }
  auto seen = [](int pool_threads) {
    RunnerSettings s = testing::settings();
    s.pool_threads = pool_threads;
    WarmWorkerRunner runner(callable("warm_mod", "pool_threads"), s);
    RunOutcome out = runner.run(simple_case().request());
    EXPECT_TRUE(out.ok()) << out.message << out.stderr_tail;
    return out.ok() ? out.outputs.at("out").to_doubles() : std::vector<double>{};
  };
  EXPECT_EQ(seen(3), (std::vector<double>{3, 3, 3}));
  EXPECT_EQ(seen(0), (std::vector<double>{-1, -1, -1}));
  ::setenv("OMP_NUM_THREADS", "5", 1);
  const auto user_sized = seen(3);
  ::unsetenv("OMP_NUM_THREADS");
  EXPECT_EQ(user_sized, (std::vector<double>{5, -1, -1}))
      << "the user's OMP_NUM_THREADS, and nothing of ours";
}

TEST(WarmWorker, NonArrayOutputIsAnError) {
  WarmWorkerRunner runner(callable("warm_mod", "not_array"), testing::settings());
  RunOutcome out = runner.run(simple_case().request());
  EXPECT_EQ(out.failure, RunFailure::crashed);
  EXPECT_EQ(out.message,
            "reference warm_mod:not_array raised AdapterError: op 'testop': output 'bad' is not a numeric "
            "array (got object of dtype object); return a numpy array of a gpuemu dtype");
}

TEST(WarmWorker, PersistentScripts) {
  WarmWorkerRunner served(testing::script_runnable("double_serve.py", true), testing::settings("op"));
  WarmWorkerRunner run_fn(testing::script_runnable("persistent_run.py", true), testing::settings("op"));
  for (int i = 0; i < 5; ++i) {
    RunOutcome a = served.run(simple_case(i).request());
    ASSERT_TRUE(a.ok()) << a.message << a.stderr_tail;
    EXPECT_EQ(a.outputs["out"].to_doubles(), (std::vector<double>{2.0 * i, 4, 6}));
    testing::Case c = simple_case(i);
    c.kwargs = {{"offset", 10}};
    RunOutcome b = run_fn.run(c.request());
    ASSERT_TRUE(b.ok()) << b.message << b.stderr_tail;
    EXPECT_EQ(b.outputs["out"].to_doubles(), (std::vector<double>{10.0 + i, 12, 13}));
  }
  EXPECT_EQ(served.workers_started(), 1);
  EXPECT_EQ(run_fn.workers_started(), 1);

  WarmWorkerRunner plain(testing::script_runnable("persistent_plain.py", true), testing::settings("op"));
  RunOutcome p = plain.run(simple_case().request());
  EXPECT_EQ(p.failure, RunFailure::crashed);
  EXPECT_NE(
      p.message.find("does not opt in to warm mode: call gpuemu.script.serve(fn) at module level or define "
                     "run(inputs, **kwargs)"),
      std::string::npos)
      << p.message;
}

TEST(WarmWorker, MakeRunnerPicksWarmForCallablesAndPersistentScripts) {
  auto a = make_runner(callable("warm_mod", "double"), testing::settings());
  auto b = make_runner(testing::script_runnable("double_serve.py", true), testing::settings());
  EXPECT_NE(dynamic_cast<WarmWorkerRunner*>(a.get()), nullptr);
  EXPECT_NE(dynamic_cast<WarmWorkerRunner*>(b.get()), nullptr);
}

TEST(WarmWorker, MissingInterpreterIsStartFailed) {
  RunnerSettings s = testing::settings();
  s.python = "python3.99";
  WarmWorkerRunner runner(callable("warm_mod", "double"), s);
  RunOutcome out = runner.run(simple_case().request());
  EXPECT_EQ(out.failure, RunFailure::start_failed);
  EXPECT_EQ(out.message,
            "python interpreter 'python3.99' not found: set [validation] python or GPUEMU_PYTHON");
}

// The same script, run cold and warm, must give byte-identical outputs at every dtype.
TEST(WarmWorker, IdenticalToColdMode) {
  ColdScriptRunner cold(testing::script_runnable("double_serve.py"), testing::settings("op"));
  WarmWorkerRunner warm(testing::script_runnable("double_serve.py", true), testing::settings("op"));
  std::vector<double> values = {0.1, -1.7, 3.14159, 1e-3, 65504, -0.0, 1.0 / 3.0};
  for (auto dtype :
       {tensor::DType::float32, tensor::DType::float16, tensor::DType::bfloat16, tensor::DType::float64}) {
    testing::Case c = case_x(tensor::Tensor::from_doubles(dtype, {7}, values));
    c.dtype = dtype;
    c.kwargs = {{"scale", 1.5}};
    RunOutcome a = cold.run(c.request());
    RunOutcome b = warm.run(c.request());
    ASSERT_TRUE(a.ok()) << a.message << a.stderr_tail;
    ASSERT_TRUE(b.ok()) << b.message << b.stderr_tail;
    const auto& x = a.outputs.at("out");
    const auto& y = b.outputs.at("out");
    EXPECT_EQ(x.dtype, y.dtype) << tensor::dtype_name(dtype);
    EXPECT_EQ(x.shape, y.shape);
    EXPECT_TRUE(x.data == y.data) << tensor::dtype_name(dtype);
  }
}

}  // namespace
}  // namespace gpuemu::proc

namespace gpuemu::proc {
namespace {

// Job threads each own their runners; children spawned on one thread must not inherit another
// thread's pipes (which would hold its EOF back), so everything finishes promptly and correctly.
TEST(WarmWorker, RunnersOnSeveralThreadsAtOnce) {
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&failures, t] {
      WarmWorkerRunner warm(testing::callable("warm_mod", "double"), testing::settings());
      ColdScriptRunner cold(testing::script_runnable("echo_single.py"), testing::settings());
      for (int i = 0; i < 4; ++i) {
        testing::Case c = testing::case_x(testing::vector_of(tensor::DType::float32, {double(t), double(i)}));
        RunOutcome a = warm.run(c.request());
        RunOutcome b = cold.run(c.request());
        if (!a.ok() || !b.ok() || a.outputs["out"].data != b.outputs["out"].data) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace
}  // namespace gpuemu::proc
