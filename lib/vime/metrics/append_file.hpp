// A file that only grows, written with one write(2) per record on an O_APPEND descriptor: no user
// space buffer, so each record is in the file (or fails loudly) when append() returns, and
// concurrent appenders never interleave inside a record.
#pragma once

#include <filesystem>
#include <string_view>

namespace vime::metrics {

class AppendFile {
 public:
  // Creates missing parent directories. With `exclusive`, refuses a path that already exists.
  // Throws vime::Error naming the path on failure.
  AppendFile(std::filesystem::path path, bool exclusive = false);
  ~AppendFile();
  AppendFile(const AppendFile&) = delete;
  AppendFile& operator=(const AppendFile&) = delete;

  // Writes all of `record` (retrying short writes). Throws vime::Error naming the path.
  void append(std::string_view record);
  // True when the file is non-empty and its last byte is not '\n' (a line cut off by a crash).
  bool ends_mid_line() const;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  int fd_ = -1;
};

}  // namespace vime::metrics
