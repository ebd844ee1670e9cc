#include "vime/core/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "vime/error.hpp"

namespace vime {

AtomicFile::AtomicFile(std::filesystem::path path) : path_(std::move(path)) {
  temp_path_ = path_;
  temp_path_ += ".tmp." + std::to_string(::getpid());
  fd_ = ::open(temp_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd_ < 0) throw Error(temp_path_.string() + ": cannot create: " + std::strerror(errno));
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) {
    ::close(fd_);
    ::unlink(temp_path_.c_str());
  }
}

void AtomicFile::write(const void* data, size_t size) {
  const auto* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::write(fd_, p, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error(temp_path_.string() + ": write failed: " + std::strerror(errno) +
                  " (disk full?)");
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
}

void AtomicFile::commit() {
  if (::fsync(fd_) != 0 || ::close(fd_) != 0) {
    fd_ = -1;
    ::unlink(temp_path_.c_str());
    throw Error(temp_path_.string() + ": cannot flush: " + std::strerror(errno));
  }
  fd_ = -1;
  if (std::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    ::unlink(temp_path_.c_str());
    throw Error(path_.string() + ": cannot rename into place: " + std::strerror(errno));
  }
}

void write_text_file_atomic(const std::filesystem::path& path, const std::string& text) {
  AtomicFile f(path);
  f.write(text.data(), text.size());
  f.commit();
}

std::string read_text_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path.string() + ": cannot read");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace vime
