#include <cstdio>
#include <string>

#include "commands.hpp"
#include "vime/core/help.hpp"

namespace vime::app {

bool print_flags_help_if_asked(const Arguments& argv, const char* usage) {
  for (size_t i = 0; i < argv.size(); ++i) {
    if (argv[i] != "--help" && argv[i] != "-h") continue;
    std::string group = i + 1 < argv.size() && !argv[i + 1].starts_with("-") ? argv[i + 1] : "";
    std::fputs(usage, stdout);
    std::fputs(core::flags_help(group).c_str(), stdout);
    return true;
  }
  return false;
}

}  // namespace vime::app
