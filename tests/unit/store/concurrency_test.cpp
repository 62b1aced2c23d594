// Several writers on one database: two real processes (fork) and threads with their own
// connections each write 500 failures at once; all rows arrive and nobody sees "locked".
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <thread>

#include <gtest/gtest.h>

#include "store/store.hpp"
#include "store_test_support.hpp"

namespace gpuemu::store {
namespace {

using testing::raw_query_text;
using testing::sample_record;
using testing::TempDir;

constexpr int kPerWriter = 500;

// Opens its own Store and writes kPerWriter failures, streaming like a fuzz run. Returns an
// error message, or "" on success.
std::string write_failures(const std::filesystem::path& file, std::uint64_t writer) {
  auto store = Store::open(file);
  if (!store) return store.error().message;
  auto run = store->begin_run({"fuzz", writer, "sha256:concurrent", "proj"});
  if (!run) return run.error().message;
  auto record = sample_record();
  record.op = "op" + std::to_string(writer);
  for (int i = 0; i < kPerWriter; ++i) {
    record.seed = writer * 1'000'000 + static_cast<std::uint64_t>(i);
    auto id = store->record_failure(*run, record);
    if (!id) return id.error().message;
  }
  result::RunResult result;
  result.command = "fuzz";
  if (auto done = store->finish_run(*run, result); !done) return done.error().message;
  return "";
}

// Both processes start at the same moment (a pipe closed by the parent is the starting gun)
// and both open a file that does not exist yet, so creation and migration race too.
TEST(StoreConcurrency, TwoProcessesWriteAtOnceAndLoseNothing) {
  TempDir dir;
  const auto file = dir.path() / "db" / "gpuemu.db";
  int gun[2];
  ASSERT_EQ(::pipe(gun), 0);
  std::vector<pid_t> children;
  for (std::uint64_t writer = 1; writer <= 2; ++writer) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(gun[1]);
      char byte;
      (void)::read(gun[0], &byte, 1);  // returns 0 when the parent closes its end
      const std::string error = write_failures(file, writer);
      if (!error.empty()) std::cerr << "writer " << writer << ": " << error << std::endl;
      ::_exit(error.empty() ? 0 : 1);
    }
    children.push_back(pid);
  }
  const auto started = std::chrono::steady_clock::now();
  ::close(gun[0]);
  ::close(gun[1]);
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "a writer failed; see its stderr above";
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::cout << "[ measured ] 2 processes x " << kPerWriter << " failures (one commit each, with snapshot) in "
            << secs << " s: " << 2 * kPerWriter / secs << " commits/s\n";

  auto store = Store::open(file);
  ASSERT_TRUE(store) << store.error().message;
  auto failures = store->list_failures({.limit = 0});
  ASSERT_TRUE(failures);
  EXPECT_EQ(failures->size(), 2u * kPerWriter);
  EXPECT_EQ(store->list_failures({.op = "op1", .limit = 0})->size(), static_cast<std::size_t>(kPerWriter));
  EXPECT_EQ(store->list_failures({.op = "op2", .limit = 0})->size(), static_cast<std::size_t>(kPerWriter));
  auto runs = store->list_runs();
  ASSERT_TRUE(runs);
  ASSERT_EQ(runs->size(), 2u);
  for (const auto& run : *runs) EXPECT_TRUE(run.finished_at.has_value());
  EXPECT_EQ(raw_query_text(file, "SELECT count(*) FROM snapshots"), std::to_string(2 * kPerWriter));
  EXPECT_EQ(raw_query_text(file, "PRAGMA integrity_check"), "ok");
}

TEST(StoreConcurrency, ThreadsWithTheirOwnConnectionsAndOneSharedStore) {
  TempDir dir;
  const auto file = dir.path() / "gpuemu.db";
  std::vector<std::string> errors(6);  // one slot per thread: 1-3 own stores, 4-5 shared
  std::vector<std::thread> threads;
  for (std::uint64_t writer = 1; writer <= 3; ++writer) {
    threads.emplace_back([&, writer] { errors[writer] = write_failures(file, writer); });
  }
  // A fourth writer shares one Store between two threads (its calls are serialised).
  auto shared = Store::open(file);
  ASSERT_TRUE(shared) << shared.error().message;
  auto run = shared->begin_run({"fuzz", 4, "sha256:shared", "proj"});
  ASSERT_TRUE(run);
  auto shared_writer = [&](std::size_t slot, std::uint64_t base) {
    for (int i = 0; i < 100; ++i) {
      auto id = shared->record_failure(*run, sample_record(base + static_cast<std::uint64_t>(i), "shared"));
      if (!id) errors[slot] = id.error().message;
    }
  };
  threads.emplace_back(shared_writer, 4, 10'000);
  threads.emplace_back(shared_writer, 5, 20'000);
  for (auto& t : threads) t.join();
  for (const auto& error : errors) EXPECT_EQ(error, "");
  auto failures = shared->list_failures({.limit = 0});
  ASSERT_TRUE(failures);
  EXPECT_EQ(failures->size(), 3u * kPerWriter + 200);
}

}  // namespace
}  // namespace gpuemu::store
