#pragma once

#include <filesystem>
#include <string>

namespace vime::tokenizer {

// The whole file; throws vime::Error naming it when it cannot be read.
std::string read_file(const std::filesystem::path& path);

}  // namespace vime::tokenizer
