#include "vime/metrics/append_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "vime/error.hpp"

namespace vime::metrics {

AppendFile::AppendFile(std::filesystem::path path, bool exclusive) : path_(std::move(path)) {
  std::error_code ec;
  if (path_.has_parent_path()) std::filesystem::create_directories(path_.parent_path(), ec);
  if (ec)
    throw Error("cannot create directory " + path_.parent_path().string() + ": " + ec.message());
  int flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC;
  if (exclusive) flags |= O_EXCL;
  fd_ = ::open(path_.c_str(), flags, 0644);
  if (fd_ < 0)
    throw Error("cannot open " + path_.string() + " for writing: " + std::strerror(errno));
}

AppendFile::~AppendFile() {
  if (fd_ >= 0) ::close(fd_);
}

void AppendFile::append(std::string_view record) {
  while (!record.empty()) {
    const ssize_t written = ::write(fd_, record.data(), record.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      throw Error("cannot write " + path_.string() + ": " + std::strerror(errno));
    }
    record.remove_prefix(static_cast<size_t>(written));
  }
}

bool AppendFile::ends_mid_line() const {
  const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char last = '\n';
  const off_t size = ::lseek(fd, 0, SEEK_END);
  if (size > 0 && ::pread(fd, &last, 1, size - 1) != 1) last = '\n';
  ::close(fd);
  return last != '\n';
}

}  // namespace vime::metrics
