// The platform layer (src/platform) in whichever mode this build has: Linux's fast paths, or the
// portable ones (GPUEMU_PORTABLE_PLATFORM=ON, scripts/test.sh's build-portable), each checked by what it
// does.
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>

#include "platform/platform.hpp"
#include "platform/process_exit.hpp"
#include "platform/shared_memory_file.hpp"

namespace gpuemu::platform {
namespace {

namespace fs = std::filesystem;

bool readable(int fd, int wait_ms) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, wait_ms) > 0;
}

// A child that waits until `release` is written to (or closed), then exits with 7.
struct WaitingChild {
  pid_t pid = -1;
  int release = -1;
  WaitingChild() {
    int fds[2];
    if (::pipe(fds) != 0) return;
    pid = ::fork();
    if (pid == 0) {
      ::close(fds[1]);
      char byte;
      [[maybe_unused]] auto n = ::read(fds[0], &byte, 1);
      ::_exit(7);
    }
    ::close(fds[0]);
    release = fds[1];
  }
  void let_go() {
    if (release >= 0) ::close(release);
    release = -1;
  }
  // Waits (up to 5 s) until the child has ended, without reaping it: it stays a zombie.
  bool ended() const {
    for (int i = 0; i < 500; ++i) {
      siginfo_t info{};
      if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
          info.si_pid == pid)
        return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }
  ~WaitingChild() {
    let_go();
    if (pid > 0) ::waitpid(pid, nullptr, 0);
  }
};

TEST(Platform, ImplementationsAreThePortableOnesWhenForced) {
  const Implementations& chosen = implementations();
  if (chosen.portable_forced) {
    EXPECT_EQ(chosen.shared_files, "private-directory");
    EXPECT_EQ(chosen.process_exit, "waitid-polling");
    EXPECT_EQ(chosen.prefault, "none");
    EXPECT_EQ(chosen.usable_cpus, "sysconf");
    EXPECT_FALSE(watches_process_exit());
  } else {
#if defined(__linux__)
    EXPECT_EQ(chosen.shared_files, "memfd");
    EXPECT_EQ(chosen.process_exit, "pidfd");
    EXPECT_EQ(chosen.prefault, "MAP_POPULATE");
    EXPECT_EQ(chosen.usable_cpus, "sched_getaffinity");
#elif defined(__APPLE__)
    EXPECT_EQ(chosen.shared_files, "private-directory");
    EXPECT_EQ(chosen.process_exit, "kqueue");
    EXPECT_EQ(chosen.executable_path, "NSGetExecutablePath");
    EXPECT_TRUE(watches_process_exit());
#endif
  }
}

TEST(Platform, SharedMemoryFileIsOneFileForWhoeverOpensItsName) {
  auto made = SharedMemoryFile::create(8192);
  ASSERT_TRUE(made) << made.error().message;
  SharedMemoryFile file = std::move(*made);
  ASSERT_GE(file.fd(), 0);
  EXPECT_NE(::fcntl(file.fd(), F_GETFD) & FD_CLOEXEC, 0);
  EXPECT_TRUE(names_shared_memory_file(file.name())) << file.name();
  EXPECT_FALSE(names_shared_memory_file("/dev/shm/gpuemu-1-2-3"));
  EXPECT_FALSE(names_shared_memory_file(""));

  // What we write through our descriptor, a second opener (a worker) reads through the name, and
  // what it writes through a shared mapping we read back.
  ASSERT_EQ(::pwrite(file.fd(), "gpuemu", 6, 100), 6);
  const int other = ::open(file.name().c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(other, 0) << file.name() << ": " << std::strerror(errno);
  struct stat st {};
  ASSERT_EQ(::fstat(other, &st), 0);
  EXPECT_EQ(st.st_size, 8192);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_uid, ::geteuid());
  char seen[6] = {};
  ASSERT_EQ(::pread(other, seen, 6, 100), 6);
  EXPECT_EQ(std::string(seen, 6), "gpuemu");
  void* mapped = ::mmap(nullptr, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, other, 0);
  ASSERT_NE(mapped, MAP_FAILED);
  std::memcpy(static_cast<char*>(mapped) + 4096, "worker", 6);
  ::munmap(mapped, 8192);
  ASSERT_EQ(::pread(file.fd(), seen, 6, 4096), 6);
  EXPECT_EQ(std::string(seen, 6), "worker");

  // Linux seals a memfd against shrinking; the portable file cannot be, and says so.
  if (implementations().shared_files == "memfd") {
    EXPECT_TRUE(file.sealed());
    EXPECT_NE(::ftruncate(other, 10), 0);
  } else {
    EXPECT_FALSE(file.sealed());
  }
  ::close(other);
}

TEST(Platform, PortableSharedFilesArePrivateAndGoWithTheirObject) {
  if (implementations().shared_files != "private-directory") GTEST_SKIP() << "memfd: no file to see";
  std::string name;
  {
    auto made = SharedMemoryFile::create(100);
    ASSERT_TRUE(made) << made.error().message;
    name = made->name();
    struct stat st {};
    ASSERT_EQ(::stat(name.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    const fs::path dir = fs::path(name).parent_path();
    ASSERT_EQ(::stat(dir.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
    EXPECT_TRUE(dir.filename().string().starts_with("gpuemu-shared-" + std::to_string(::getpid()) + "-"));
    // A file elsewhere, even beside ours in name, is not one of ours.
    EXPECT_FALSE(names_shared_memory_file(dir.string() + "/../" + fs::path(name).filename().string()));
    EXPECT_FALSE(names_shared_memory_file(dir.string() + "x/0"));
    // Moving keeps one owner: the moved-from object unlinks nothing.
    SharedMemoryFile moved = std::move(*made);
    EXPECT_EQ(moved.name(), name);
  }
  EXPECT_FALSE(fs::exists(name));
  // Two files never share a name.
  auto a = SharedMemoryFile::create(10);
  auto b = SharedMemoryFile::create(10);
  ASSERT_TRUE(a && b);
  EXPECT_NE(a->name(), b->name());
}

TEST(Platform, ExitWatchTurnsReadableWhenTheProcessEnds) {
  WaitingChild child;
  ASSERT_GT(child.pid, 0);
  const int watch = open_exit_watch(child.pid);
  if (!watches_process_exit()) {
    EXPECT_EQ(watch, -1);  // the caller polls with waitid
    return;
  }
  ASSERT_GE(watch, 0);
  EXPECT_NE(::fcntl(watch, F_GETFD) & FD_CLOEXEC, 0);
  EXPECT_FALSE(readable(watch, 50));
  child.let_go();
  EXPECT_TRUE(readable(watch, 5000));
  EXPECT_TRUE(readable(watch, 0));  // and stays so
  ::close(watch);
  // A process that has already ended (a zombie) is watched as ended at once.
  ASSERT_TRUE(child.ended());
  const int late = open_exit_watch(child.pid);
  ASSERT_GE(late, 0);
  EXPECT_TRUE(readable(late, 1000));
  ::close(late);
}

TEST(Platform, ProcessRunningUntilItEndsZombieOrNot) {
  WaitingChild child;
  ASSERT_GT(child.pid, 0);
  EXPECT_TRUE(process_running(child.pid));
  child.let_go();
  ASSERT_TRUE(child.ended());
  EXPECT_FALSE(process_running(child.pid));  // a zombie does not run
  EXPECT_TRUE(process_running(::getpid()));
}

TEST(Platform, PipesAndSocketsAreCloseOnExec) {
  int fds[2];
  ASSERT_EQ(make_pipe(fds), 0);
  for (int fd : fds) {
    EXPECT_NE(::fcntl(fd, F_GETFD) & FD_CLOEXEC, 0);
    ::close(fd);
  }
  ASSERT_EQ(make_socketpair(SOCK_STREAM, fds), 0);
  for (int fd : fds) EXPECT_NE(::fcntl(fd, F_GETFD) & FD_CLOEXEC, 0);
  // The no-SIGPIPE flag is one send() takes: a send to a closed peer fails with EPIPE.
  ::close(fds[1]);
  ::signal(SIGPIPE, SIG_IGN);
  EXPECT_LT(::send(fds[0], "x", 1, send_without_sigpipe_flag()), 0);
  EXPECT_EQ(errno, EPIPE);
  ::close(fds[0]);
}

TEST(Platform, ExecutablePathIsThisTestBinary) {
  const fs::path exe = executable_path();
  ASSERT_FALSE(exe.empty());
  EXPECT_TRUE(exe.is_absolute());
  EXPECT_EQ(exe.filename(), "unit_platform");
  EXPECT_TRUE(fs::is_regular_file(exe));
}

TEST(Platform, PrefaultedMemoryIsZeroedAndWritable) {
  constexpr std::size_t kBytes = 3 << 20;
  auto* bytes = static_cast<unsigned char*>(map_prefaulted(kBytes));
  ASSERT_NE(bytes, nullptr);
  EXPECT_EQ(bytes[0], 0);
  EXPECT_EQ(bytes[kBytes - 1], 0);
  bytes[kBytes / 2] = 42;
  EXPECT_EQ(bytes[kBytes / 2], 42);
  ::munmap(bytes, kBytes);
}

TEST(Platform, WaitForSignalTakesAPendingOneOrTimesOut) {
  sigset_t set, old;
  sigemptyset(&set);
  sigaddset(&set, SIGUSR2);
  ASSERT_EQ(::pthread_sigmask(SIG_BLOCK, &set, &old), 0);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(wait_for_signal(set, std::chrono::milliseconds(50)), -1);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(40));
  ASSERT_EQ(::raise(SIGUSR2), 0);  // stays pending: blocked in this thread
  EXPECT_EQ(wait_for_signal(set, std::chrono::milliseconds(1000)), SIGUSR2);
  EXPECT_EQ(wait_for_signal(set, std::chrono::milliseconds(0)), -1);  // taken, not pending any more
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  EXPECT_STREQ(signal_description(SIGSEGV), "Segmentation fault");
}

TEST(Platform, UsableCpusIsAtLeastOne) {
  EXPECT_GE(usable_cpus(), 1);
  EXPECT_LE(usable_cpus(), static_cast<int>(::sysconf(_SC_NPROCESSORS_CONF)));
}

}  // namespace
}  // namespace gpuemu::platform
