// vime plugin inspect LIB.so | vime plugin new --kind KIND NAME [--output DIR]
#include <cstdio>
#include <filesystem>
#include <string>

#include "commands.hpp"
#include "vime/core/arg_parser.hpp"
#include "vime/core/flags/command_flags.hpp"
#include "vime/error.hpp"
#include "vime/plugin/plugin_loader.hpp"
#include "vime/plugin/scaffold.hpp"

namespace vime::app {
namespace {

constexpr const char* kUsage = R"(usage: vime plugin inspect LIB.so
       vime plugin new --kind KIND NAME [--output DIR]

inspect   list what a plugin exports: name, kind and plugin ABI of each function
new       write a CMake project for a new plugin (default DIR: ./NAME) that builds out of tree against an
          installed vime (find_package(vime)); KIND is one of: )";

// The flags of core::flags::plugin_command(), checked: --kind and --output go with `new`.
struct PluginOptions {
  std::string command, target, kind, output;

  static PluginOptions from(const Args& args) {
    PluginOptions o;
    o.command = args.get_string("command");
    o.target = args.get_string("target");
    if (args.is_set("kind")) o.kind = args.get_string("kind");
    if (args.is_set("output")) o.output = args.get_string("output");
    if (o.command == "new" && o.kind.empty()) {
      throw UsageError("--kind is required (vime plugin --help lists the kinds)");
    }
    if (o.command == "inspect" && (!o.kind.empty() || !o.output.empty())) {
      throw UsageError("inspect takes one plugin file (--kind and --output go with new)");
    }
    return o;
  }
};

int inspect(const PluginOptions& o) {
  auto info = plugin::inspect_plugin(o.target, "");
  std::printf("%s: vime plugin ABI %u, %zu export(s)\n", info.path.c_str(), info.abi,
              info.exports.size());
  for (const auto& e : info.exports) {
    std::printf("  %-32s %s\n", e.name.c_str(), plugin_kind_name(e.kind));
  }
  return 0;
}

int create(const PluginOptions& o) {
  std::filesystem::path dir =
      o.output.empty() ? std::filesystem::path(o.target) : std::filesystem::path(o.output);
  for (const auto& file : plugin::write_plugin_scaffold(o.kind, o.target, dir))
    std::printf("wrote %s\n", file.c_str());
  std::printf(
      "build: cmake -S %s -B %s/build -DCMAKE_PREFIX_PATH=<vime install prefix> && cmake --build "
      "%s/build\n",
      dir.c_str(), dir.c_str(), dir.c_str());
  return 0;
}

}  // namespace

int run_plugin(const Arguments& argv) {
  std::string kinds;
  for (const auto& k : plugin::scaffold_kinds()) kinds += (kinds.empty() ? "" : ", ") + k;
  const std::string usage = kUsage + kinds + "\n";
  const auto& flags = core::flags::plugin_flags();
  if (auto code = help_exit_code(argv, usage.c_str(), flags)) return *code;
  const auto o = PluginOptions::from(core::parse_args(argv, flags));
  return o.command == "inspect" ? inspect(o) : create(o);
}

}  // namespace vime::app
