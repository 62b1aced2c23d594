// SharedFile, InputArena and OutputFiles (shared_file.hpp): shared-memory files that hold a case's inputs
// once for every worker of the session to map, and a worker's outputs for us to read in place.
#include "wire/shared_file.hpp"

#include <sys/mman.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <vector>

namespace gpuemu::wire {

namespace {

constexpr std::uint64_t kAlign = 64;  // each tensor starts on a cache line (and numpy's preferred alignment)
constexpr std::uint64_t kMinFile = std::uint64_t{1} << 20;
constexpr std::uint64_t kMostFirstOutputFile = std::uint64_t{16}
                                               << 20;  // a worker fills it whole when it maps it

std::uint64_t align_up(std::uint64_t n) {
  return (n + kAlign - 1) / kAlign * kAlign;
}

constexpr std::size_t kMostPooledFiles = 8;
constexpr std::uint64_t kMostPooledBytes = std::uint64_t{128} << 20;

// The files no one uses (SharedFile::reuse_or_create), oldest first.
struct FilePool {
  std::mutex mutex;
  std::deque<SharedFile*> files;
  std::uint64_t bytes = 0;
};

FilePool& file_pool() {
  static FilePool* const pool = new FilePool;  // never destroyed: a file let go at exit must find it
  return *pool;
}

void give_back(SharedFile* file) {
  FilePool& pool = file_pool();
  std::vector<SharedFile*> dropped;
  {
    std::lock_guard lock(pool.mutex);
    pool.files.push_back(file);
    pool.bytes += file->size();
    while (pool.files.size() > kMostPooledFiles || pool.bytes > kMostPooledBytes) {
      dropped.push_back(pool.files.front());
      pool.bytes -= pool.files.front()->size();
      pool.files.pop_front();
    }
  }
  for (SharedFile* old : dropped) delete old;  // unmapped and closed outside the lock
}

SharedFile* take_pooled(std::uint64_t size, std::uint64_t most) {
  FilePool& pool = file_pool();
  std::lock_guard lock(pool.mutex);
  auto best = pool.files.end();
  for (auto it = pool.files.begin(); it != pool.files.end(); ++it) {
    const std::uint64_t have = (*it)->size();
    if (have >= size && have <= most && (best == pool.files.end() || have < (*best)->size())) best = it;
  }
  if (best == pool.files.end()) return nullptr;
  SharedFile* file = *best;
  pool.bytes -= file->size();
  pool.files.erase(best);
  return file;
}

}  // namespace

Expected<std::shared_ptr<SharedFile>> SharedFile::reuse_or_create(std::uint64_t size, std::uint64_t most) {
  SharedFile* file = take_pooled(size, most > 0 ? std::max(most, size) : 4 * size);
  if (file == nullptr) {
    file = TRY(make(size));
  }
  return std::shared_ptr<SharedFile>(file, give_back);
}

Expected<std::shared_ptr<SharedFile>> SharedFile::create(std::uint64_t size) {
  return std::shared_ptr<SharedFile>(TRY(make(size)));
}

Expected<SharedFile*> SharedFile::make(std::uint64_t size) {
  platform::SharedMemoryFile file = TRY(platform::SharedMemoryFile::create(size));
  void* at = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, file.fd(), 0);
  if (at == MAP_FAILED) {
    return fail(ErrorKind::io,
                fmt::format("cannot map an input file of {} bytes: {}", size, std::strerror(errno)));
  }
  return new SharedFile(std::move(file), static_cast<std::byte*>(at), size);
}

SharedFile::SharedFile(platform::SharedMemoryFile file, std::byte* data, std::uint64_t size)
    : file_(std::move(file)), data_(data), size_(size) {}

SharedFile::~SharedFile() {
  ::munmap(data_, size_);
}

bool names_input_file(std::string_view segment) {
  return platform::names_shared_memory_file(segment);
}

namespace {

bool shared_files_enabled() {
  const char* flag = std::getenv("GPUEMU_MAPPED_INPUTS");
  return flag == nullptr || std::string_view(flag) != "0";
}

}  // namespace

InputArena::InputArena() : enabled_(shared_files_enabled()) {}

OutputFiles::OutputFiles() : enabled_(shared_files_enabled()) {}

std::shared_ptr<SharedFile> OutputFiles::offer() {
  if (!enabled_) return nullptr;
  // A file an earlier case's outputs still view is left alone: those bytes must not change. The
  // first free one that is large enough is offered again (the worker keeps it mapped).
  for (const auto& file : files_) {
    if (file && file.use_count() == 1 && file->size() >= want_) return file;
  }
  // Replaced: a file too small that nobody uses, else the one an earlier case's outputs still view
  // (they keep it alive until they are done with it; then it goes back to the pool).
  auto slot = std::ranges::find_if(files_, [](const auto& file) { return !file || file.use_count() == 1; });
  if (slot == files_.end()) slot = files_.begin();
  const std::uint64_t size = std::max(kMinFile, want_);
  slot->reset();
  // The first offer cannot know the outputs' size: a pooled file up to kMostFirstOutputFile (an
  // earlier op's, sized for its outputs) spares the first calls a worker's segment and a new file.
  auto made = SharedFile::reuse_or_create(size + size / 4, want_ == 0 ? kMostFirstOutputFile : 0);
  if (!made) {
    enabled_ = false;
    return nullptr;
  }
  *slot = std::move(*made);
  std::ranges::rotate(files_, slot);  // the newest first: offered before an older one
  return files_.front();
}

bool InputArena::ready_for(std::uint64_t need) {
  if (!enabled_) return false;
  // A file some tensor still views (a caller kept a case's inputs) is left alone: its bytes stay valid.
  if (!file_ || file_.use_count() > 1 || file_->size() < need) {
    const std::uint64_t size =
        std::max({kMinFile, need, file_ && file_.use_count() == 1 ? file_->size() : 0});
    file_.reset();
    auto made = SharedFile::reuse_or_create(size + size / 4);  // room to grow a little before the next file
    if (!made) {
      enabled_ = false;
      return false;
    }
    file_ = std::move(*made);
  }
  return true;
}

std::optional<std::vector<tensor::PlacedStorage>> InputArena::reserve(const std::vector<std::size_t>& sizes) {
  std::uint64_t need = 0;
  for (const std::size_t n : sizes) need += align_up(n);
  if (!ready_for(need)) return std::nullopt;
  std::vector<tensor::PlacedStorage> placed;
  std::uint64_t offset = 0;
  for (const std::size_t n : sizes) {
    std::byte* bytes = file_->data() + offset;
    placed.push_back({tensor::Storage::view(file_, {bytes, n}, file_->path(), offset), bytes});
    offset += align_up(n);
  }
  return placed;
}

std::optional<tensor::NamedTensors> InputArena::place(const tensor::NamedTensors& inputs) {
  std::vector<std::size_t> sizes;
  for (const auto& [name, t] : inputs) sizes.push_back(t.data.size());
  auto room = reserve(sizes);
  if (!room) return std::nullopt;
  tensor::NamedTensors placed;
  std::size_t k = 0;
  for (const auto& [name, t] : inputs) {
    tensor::Tensor view;
    view.dtype = t.dtype;
    view.shape = t.shape;
    view.strides = t.strides;
    auto& [storage, bytes] = (*room)[k++];
    if (!t.data.empty()) std::memcpy(bytes, t.data.data(), t.data.size());
    view.data = std::move(storage);
    placed.emplace(name, std::move(view));
  }
  return placed;
}

}  // namespace gpuemu::wire
