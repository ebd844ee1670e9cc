#include "vime/plugin/builtin_plugins.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <string>

namespace vime::plugin {

std::filesystem::path builtin_plugin_dir() {
  if (const char* dir = std::getenv("VIME_PLUGIN_DIR"); dir != nullptr && *dir != '\0') return dir;
  Dl_info info{};
  if (::dladdr(reinterpret_cast<const void*>(&builtin_plugin_dir), &info) != 0 &&
      info.dli_fname != nullptr) {
    return std::filesystem::path(info.dli_fname).parent_path() / "vime";
  }
  return std::filesystem::path("vime");
}

std::filesystem::path builtin_plugin_path(std::string_view name) {
  return builtin_plugin_dir() / ("lib" + std::string(name) + ".so");
}

}  // namespace vime::plugin
