// A file that appears under its name only when complete: written to "<name>.tmp.<pid>", flushed,
// fsync'ed and renamed over `path` by commit(). Destroyed without commit(), it removes the temp
// file. The directory must exist. Every whole-file write of vime (checkpoints, data-source state,
// `vime reward` / `vime tokenize` outputs) goes through it.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>

namespace vime {

class AtomicFile {
 public:
  explicit AtomicFile(std::filesystem::path path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(const void* data, size_t size);
  void commit();

 private:
  std::filesystem::path path_, temp_path_;
  int fd_ = -1;
};

void write_text_file_atomic(const std::filesystem::path& path, const std::string& text);
std::string read_text_file(const std::filesystem::path& path);

}  // namespace vime
