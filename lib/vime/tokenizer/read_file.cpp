#include "vime/tokenizer/read_file.hpp"

#include <fstream>
#include <sstream>

#include "vime/error.hpp"

namespace vime::tokenizer {

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("tokenizer: cannot read " + path.string());
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

}  // namespace vime::tokenizer
