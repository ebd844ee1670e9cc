// A file that only grows: each record is written by write(2) on an O_APPEND descriptor under an
// exclusive flock(2). No user-space buffer, so a record is in the file (or failed loudly) when
// append() returns; and writers that append through this class, in any process, never interleave
// inside a record, even where O_APPEND alone is not atomic (NFS) or a write comes back short.
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

  // Writes all of `record`. With `on_new_line`, first writes '\n' when the file ends inside a
  // line (cut off by a writer that was killed). Throws vime::Error naming the path.
  void append(std::string_view record, bool on_new_line = false);
  const std::filesystem::path& path() const { return path_; }

 private:
  bool ends_mid_line() const;  // call with the lock held
  void write_all(std::string_view bytes);

  std::filesystem::path path_;
  int fd_ = -1;
};

}  // namespace vime::metrics
