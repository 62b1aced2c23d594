// kill -9 at random moments: a child streams failures and reports each id on a pipe only after
// record_failure returned; after every SIGKILL the database opens, passes integrity_check, and
// holds every id the child had reported as stored.
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <optional>
#include <random>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "store/store.hpp"
#include "store_test_support.hpp"

namespace gpuemu::store {
namespace {

using testing::raw_query_text;
using testing::sample_record;
using testing::TempDir;

[[noreturn]] void child_writes_until_killed(const std::filesystem::path& file, int report_fd, int round) {
  auto store = Store::open(file);
  if (!store) ::_exit(2);
  auto run = store->begin_run({"fuzz", static_cast<std::uint64_t>(round), "sha256:durable", "proj"});
  if (!run) ::_exit(3);
  auto record = sample_record();
  for (std::uint64_t i = 0;; ++i) {
    record.seed = i;
    auto id = store->record_failure(*run, record);
    if (!id) ::_exit(4);
    // One short write per id: atomic on a pipe, so the parent never sees half a line.
    const std::string line = std::to_string(*id) + "\n";
    if (::write(report_fd, line.data(), line.size()) != static_cast<ssize_t>(line.size())) ::_exit(5);
  }
}

// Reads complete lines ("id\n") from the pipe into `ids`; `partial` keeps an unfinished line.
void take_lines(const char* data, std::size_t size, std::string& partial, std::set<FailureId>& ids) {
  partial.append(data, size);
  std::size_t start = 0;
  for (std::size_t nl; (nl = partial.find('\n', start)) != std::string::npos; start = nl + 1) {
    ids.insert(std::stoll(partial.substr(start, nl - start)));
  }
  partial.erase(0, start);
}

TEST(StoreDurability, KillNineNeverLosesAReportedFailure) {
  TempDir dir;
  const auto file = dir.path() / "gpuemu.db";
  std::mt19937 rng(20240611);
  std::set<FailureId> reported;
  for (int round = 0; round < 20; ++round) {
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(fds[0]);
      child_writes_until_killed(file, fds[1], round);
    }
    ::close(fds[1]);
    // Round 0 kills during creation/migration. Later rounds wait for a random number of reported
    // ids (so a loaded machine still gets past the start) and then a random extra delay, so the
    // kill lands anywhere in a transaction, between transactions, or in a checkpoint.
    const std::size_t wait_for_ids = round == 0 ? 0 : rng() % 60 + 1;
    const auto extra_delay = std::chrono::microseconds(round == 0 ? 2000 : rng() % 5000);
    std::string partial;
    std::set<FailureId> this_round;
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    std::optional<std::chrono::steady_clock::time_point> kill_at;
    char buffer[4096];
    for (;;) {
      const auto now = std::chrono::steady_clock::now();
      if (!kill_at && this_round.size() >= wait_for_ids) kill_at = now + extra_delay;
      if ((kill_at && now >= *kill_at) || now >= give_up) break;
      pollfd p{fds[0], POLLIN, 0};
      if (::poll(&p, 1, 1) > 0) {
        const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
        if (n <= 0) break;
        take_lines(buffer, static_cast<std::size_t>(n), partial, this_round);
      }
    }
    ASSERT_EQ(::kill(pid, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status)) << "the writer exited by itself with " << WEXITSTATUS(status)
                                     << " (2 open, 3 begin_run, 4 record_failure, 5 pipe)";
    // Whatever reached the pipe before the kill was reported as stored.
    for (ssize_t n; (n = ::read(fds[0], buffer, sizeof buffer)) > 0;) {
      take_lines(buffer, static_cast<std::size_t>(n), partial, this_round);
    }
    ::close(fds[0]);
    reported.insert(this_round.begin(), this_round.end());

    // A kill before the child created the file leaves nothing to check yet.
    if (std::filesystem::exists(file)) {
      ASSERT_EQ(raw_query_text(file, "PRAGMA integrity_check"), "ok") << "round " << round;
    }
    auto store = Store::open(file);
    ASSERT_TRUE(store) << "round " << round << ": " << store.error().message;
    auto failures = store->list_failures({.limit = 0});
    ASSERT_TRUE(failures) << failures.error().message;
    std::set<FailureId> present;
    for (const auto& f : *failures) present.insert(f.id);
    for (FailureId id : reported)
      ASSERT_TRUE(present.contains(id)) << "round " << round << ": lost failure " << id;
    // The newest reported failure reads back whole, snapshot included.
    if (!this_round.empty()) {
      auto last = store->get_failure(*this_round.rbegin());
      ASSERT_TRUE(last && last->has_value());
      ASSERT_NE((*last)->record.inputs, nullptr);
      testing::expect_same_tensors(*(*last)->record.inputs, *sample_record().inputs);
    }
  }
  EXPECT_GE(reported.size(), 19u) << "the kills came too early to test anything";
  std::cout << "[ measured ] " << reported.size()
            << " failures reported as stored across 20 kills, none lost\n";
}

}  // namespace
}  // namespace gpuemu::store
