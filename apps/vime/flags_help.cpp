#include <algorithm>
#include <cstdio>
#include <string>

#include "commands.hpp"
#include "vime/core/help.hpp"

namespace vime::app {

std::optional<int> help_exit_code(const Arguments& argv, const char* usage,
                                  const core::FlagRegistry& registry) {
  if (auto help = core::help_if_asked(argv, usage, registry)) {
    std::fputs(help->c_str(), stdout);
    return 0;
  }
  const auto positionals = registry.positionals();
  if (argv.empty() && std::any_of(positionals.begin(), positionals.end(),
                                  [](const core::FlagSpec* spec) { return spec->required; })) {
    std::fputs(usage, stdout);
    return 2;
  }
  return std::nullopt;
}

}  // namespace vime::app
