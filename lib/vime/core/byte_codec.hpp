// Plain bytes for messages between vime's own ranks (rank 0's rollout orders, the tensor-parallel
// engine's step plans): trivially copyable values and vectors of them, in this machine's layout.
// The reader checks every length against what is left and fails with one line naming the message.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "vime/error.hpp"

namespace vime::core {

class ByteWriter {
 public:
  template <class T>
  void put(T value) {
    static_assert(std::is_trivially_copyable_v<T>);
    out_.append(reinterpret_cast<const char*>(&value), sizeof(T));
  }
  template <class T>
  void put_vector(const std::vector<T>& values) {
    static_assert(std::is_trivially_copyable_v<T>);
    put<uint64_t>(values.size());
    out_.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

class ByteReader {
 public:
  // `what` names the message in the error, e.g. "rank channel: a rollout message".
  ByteReader(const std::string& in, std::string what) : in_(in), what_(std::move(what)) {}
  template <class T>
  T get() {
    static_assert(std::is_trivially_copyable_v<T>);
    if (in_.size() - pos_ < sizeof(T)) fail();
    T value;
    std::memcpy(&value, in_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return value;
  }
  template <class T>
  std::vector<T> get_vector() {
    const auto n = get<uint64_t>();
    if (n > (in_.size() - pos_) / sizeof(T)) fail();
    std::vector<T> values(n);
    std::memcpy(values.data(), in_.data() + pos_, n * sizeof(T));
    pos_ += n * sizeof(T);
    return values;
  }
  bool at_end() const { return pos_ == in_.size(); }
  [[noreturn]] void fail() const {
    throw Error(what_ + " is truncated or foreign (" + std::to_string(in_.size()) +
                " bytes); were all ranks started from the same vime?");
  }

 private:
  const std::string& in_;
  std::string what_;
  size_t pos_ = 0;
};

}  // namespace vime::core
