// The flag tables are data: check them as data. Every default must parse as its own kind, choices
// must contain the default, and names, aliases and dests are unique (the registry throws
// otherwise).
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

#include "vime/core/flag_registry.hpp"

using namespace vime::core;

TEST_CASE("every flag row is well formed", "[flags]") {
  const auto& registry = FlagRegistry::instance();  // throws on duplicate names or dests
  size_t count = 0;
  for (const auto& group : registry.groups()) {
    for (const auto& spec : group.flags) {
      ++count;
      INFO(spec.name);
      CHECK(spec.name.starts_with("--"));
      CHECK_FALSE(spec.help.empty());
      CHECK_NOTHROW(default_value(spec));
      if (!spec.choices.empty() && spec.default_value != nullptr && !is_switch(spec)) {
        std::string choices = "|";
        choices += spec.choices;
        choices += '|';
        std::string value = "|";
        value += spec.default_value;
        value += '|';
        CHECK(choices.find(value) != std::string::npos);
      }
    }
  }
  CHECK(count > 300);
}

TEST_CASE("every flag of every scripts/models preset is known", "[flags]") {
  const auto& registry = FlagRegistry::instance();
  size_t presets = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(VIME_SOURCE_DIR) + "/scripts/models")) {
    if (entry.path().extension() != ".sh") continue;
    ++presets;
    std::ifstream in(entry.path());
    std::string line;
    static const std::regex kFlag(R"(^\s*(--[a-z0-9-]+))");
    while (std::getline(in, line)) {
      std::smatch m;
      if (!std::regex_search(line, m, kFlag)) continue;
      INFO(entry.path().filename().string() << ": " << m[1].str());
      CHECK(registry.find(m[1].str()) != nullptr);
    }
  }
  CHECK(presets >= 10);
}
