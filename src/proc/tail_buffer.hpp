// A bounded byte buffer that keeps only the last `capacity` bytes written to it: the stderr tail
// of a script or worker, however much it prints.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace gpuemu::proc {

// Keeps the end of a stream; amortised O(1) per byte (trims only when twice over capacity).
class TailBuffer {
 public:
  explicit TailBuffer(std::size_t capacity) : capacity_(capacity) {}

  void append(std::string_view bytes) {
    total_ += bytes.size();
    if (capacity_ == 0) return;
    if (bytes.size() >= capacity_) {
      data_.assign(bytes.substr(bytes.size() - capacity_));
      return;
    }
    data_.append(bytes);
    if (data_.size() > 2 * capacity_) data_.erase(0, data_.size() - capacity_);
  }

  // The last `capacity` bytes.
  std::string str() const {
    return data_.size() > capacity_ ? data_.substr(data_.size() - capacity_) : data_;
  }
  std::size_t total() const { return total_; }  // bytes ever appended
  void clear() {
    data_.clear();
    total_ = 0;
  }

 private:
  std::size_t capacity_;
  std::string data_;
  std::size_t total_ = 0;
};

}  // namespace gpuemu::proc
