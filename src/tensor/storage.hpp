// A tensor's storage buffer: either bytes it owns, or a read-only view of bytes kept alive by
// someone else (a shared-memory segment, a received message), so large tensors are not copied.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

namespace gpuemu::tensor {

// Reads never copy. Any write (a non-const accessor, resize, assign) first gives a view its own
// copy of the bytes, so a Storage behaves like the std::vector<std::byte> it replaces and a view
// can never change what its owner sees.
class Storage {
 public:
  Storage() = default;
  Storage(std::vector<std::byte> bytes) : owned_(std::move(bytes)) {}  // NOLINT: implicit on purpose
  explicit Storage(std::size_t n) : owned_(n) {}
  template <class It>
  Storage(It first, It last) : owned_(first, last) {}

  // A view of `bytes`, which stay valid and unchanged while `keeper` lives. `segment` names the
  // shared-memory file the bytes are mapped from (kept alive by `keeper`), `offset` their place in
  // it, so the view can be passed on to another process by name instead of by value.
  static Storage view(std::shared_ptr<const void> keeper, std::span<const std::byte> bytes,
                      std::string_view segment = {}, std::uint64_t offset = 0);

  bool is_view() const { return keeper_ != nullptr; }
  // The shared-memory file and offset of a view of one; empty for anything else.
  std::string_view segment() const { return segment_; }
  std::uint64_t segment_offset() const { return segment_offset_; }
  // Copies a view's bytes into a buffer of its own (no-op when already owned): for anything that
  // outlives the message or segment the view points into.
  void own();

  const std::byte* data() const { return keeper_ ? view_.data() : owned_.data(); }
  std::byte* data() { return writable().data(); }
  std::size_t size() const { return keeper_ ? view_.size() : owned_.size(); }
  bool empty() const { return size() == 0; }
  const std::byte* begin() const { return data(); }
  const std::byte* end() const { return data() + size(); }
  std::byte* begin() { return data(); }
  std::byte* end() { return data() + size(); }
  const std::byte& operator[](std::size_t i) const { return data()[i]; }
  std::byte& operator[](std::size_t i) { return data()[i]; }
  operator std::span<const std::byte>() const { return {data(), size()}; }  // NOLINT: implicit on purpose

  void resize(std::size_t n) { writable().resize(n); }
  void reserve(std::size_t n) { writable().reserve(n); }
  void clear() { writable().clear(); }
  void push_back(std::byte b) { writable().push_back(b); }
  template <class It>
  void assign(It first, It last) {
    keeper_.reset();
    view_ = {};
    segment_ = {};
    owned_.assign(first, last);
  }

  friend bool operator==(const Storage& a, const Storage& b);

 private:
  std::vector<std::byte>& writable() {
    own();
    return owned_;
  }

  std::vector<std::byte> owned_;
  std::shared_ptr<const void> keeper_;  // set for views
  std::span<const std::byte> view_;
  std::string_view segment_;
  std::uint64_t segment_offset_ = 0;
};

// A view's storage with the pointer its bytes are written through (a view itself is read-only):
// what a caller that lays out tensors in shared memory hands to the code that fills them.
struct PlacedStorage {
  Storage storage;
  std::byte* bytes = nullptr;
};

}  // namespace gpuemu::tensor
