// Where vime's own plugins (rm_hub, filter_hub) live: beside libvime, in
// <libdir>/vime/lib<name>.so, in the build tree and after `cmake --install` alike. $VIME_PLUGIN_DIR
// overrides the directory.
#pragma once

#include <filesystem>
#include <string_view>

namespace vime::plugin {

std::filesystem::path builtin_plugin_dir();
// "rm_math" -> <dir>/librm_math.so (whether or not it exists).
std::filesystem::path builtin_plugin_path(std::string_view name);

}  // namespace vime::plugin
