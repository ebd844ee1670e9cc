#include "vime/metrics/append_file.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <system_error>

#include "vime/error.hpp"

namespace vime::metrics {
namespace {

class FileLock {
 public:
  explicit FileLock(int fd) : fd_(fd) {
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno != EINTR) throw std::system_error(errno, std::generic_category(), "flock");
    }
  }
  ~FileLock() { ::flock(fd_, LOCK_UN); }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_;
};

}  // namespace

AppendFile::AppendFile(std::filesystem::path path, bool exclusive) : path_(std::move(path)) {
  std::error_code ec;
  if (path_.has_parent_path()) std::filesystem::create_directories(path_.parent_path(), ec);
  if (ec) {
    throw Error("cannot create directory " + path_.parent_path().string() + ": " + ec.message());
  }
  // Read access too: ends_mid_line() looks at the last byte.
  int flags = O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC;
  if (exclusive) flags |= O_EXCL;
  fd_ = ::open(path_.c_str(), flags, 0644);
  if (fd_ < 0) {
    throw Error("cannot open " + path_.string() + " for writing: " + std::strerror(errno));
  }
}

AppendFile::~AppendFile() {
  if (fd_ >= 0) ::close(fd_);
}

void AppendFile::append(std::string_view record, bool on_new_line) {
  try {
    FileLock lock(fd_);
    if (on_new_line && ends_mid_line()) write_all("\n");
    write_all(record);
  } catch (const std::system_error& e) {
    throw Error("cannot write " + path_.string() + ": " + std::strerror(e.code().value()));
  }
}

bool AppendFile::ends_mid_line() const {
  struct stat info {};
  if (::fstat(fd_, &info) != 0) throw std::system_error(errno, std::generic_category(), "fstat");
  if (info.st_size == 0) return false;
  char last = '\n';
  if (::pread(fd_, &last, 1, info.st_size - 1) != 1) {
    throw std::system_error(errno, std::generic_category(), "pread");
  }
  return last != '\n';
}

void AppendFile::write_all(std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t written = ::write(fd_, bytes.data(), bytes.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      throw std::system_error(errno, std::generic_category(), "write");
    }
    bytes.remove_prefix(static_cast<size_t>(written));
  }
}

}  // namespace vime::metrics
