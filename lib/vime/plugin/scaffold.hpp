// `vime plugin new`: a small CMake project for one plugin that builds out of tree against an
// installed vime (find_package(vime)).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace vime::plugin {

std::vector<std::string> scaffold_kinds();  // the kinds `vime plugin new --kind` can write
// Writes <dir>/CMakeLists.txt, <dir>/<name>.cpp and <dir>/README.md. Throws UsageError for an
// unknown kind, a name that is no C identifier, or a directory that already holds these files.
std::vector<std::filesystem::path> write_plugin_scaffold(const std::string& kind,
                                                         const std::string& name,
                                                         const std::filesystem::path& dir);

}  // namespace vime::plugin
