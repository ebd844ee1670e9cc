#include "vime/data/atomic_file.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "vime/error.hpp"

namespace vime::data {

void write_file_atomically(const std::filesystem::path& path, std::string_view content) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
  if (ec) throw Error("cannot create " + path.parent_path().string() + ": " + ec.message());

  const fs::path temp = path.string() + ".tmp." + std::to_string(::getpid());
  std::FILE* out = std::fopen(temp.c_str(), "wb");
  if (out == nullptr) throw Error("cannot write " + temp.string() + ": " + std::strerror(errno));
  const bool written = std::fwrite(content.data(), 1, content.size(), out) == content.size() &&
                       std::fflush(out) == 0 && ::fsync(::fileno(out)) == 0;
  const int saved_errno = errno;
  const bool closed = std::fclose(out) == 0;
  if (!written || !closed) {
    fs::remove(temp, ec);
    throw Error("cannot write " + temp.string() + ": " + std::strerror(saved_errno));
  }
  fs::rename(temp, path, ec);
  if (ec) {
    const std::string why = ec.message();
    fs::remove(temp, ec);
    throw Error("cannot rename " + temp.string() + " to " + path.string() + ": " + why);
  }
}

}  // namespace vime::data
