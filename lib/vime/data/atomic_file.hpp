// Whole-file writes that never leave a half-written file behind: write a temp file beside the
// target, flush, then rename over it.
#pragma once

#include <filesystem>
#include <string_view>

namespace vime::data {

// Creates missing parent directories. Throws vime::Error naming the path on failure.
void write_file_atomically(const std::filesystem::path& path, std::string_view content);

}  // namespace vime::data
