// vime plugin inspect LIB.so | vime plugin new --kind KIND NAME [--output DIR]
#include <cstdio>
#include <filesystem>

#include "commands.hpp"
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

int inspect(const Arguments& argv) {
  if (argv.size() != 1) throw UsageError("vime plugin inspect takes one plugin file");
  auto info = plugin::inspect_plugin(argv[0], "vime plugin inspect");
  std::printf("%s: vime plugin ABI %u, %zu export(s)\n", info.path.c_str(), info.abi,
              info.exports.size());
  for (const auto& e : info.exports) {
    std::printf("  %-32s %s\n", e.name.c_str(), plugin_kind_name(e.kind));
  }
  return 0;
}

int create(const Arguments& argv) {
  std::string kind, name, output;
  for (size_t i = 0; i < argv.size(); ++i) {
    auto value = [&](const char* flag) {
      if (i + 1 >= argv.size()) throw UsageError(std::string(flag) + " expects a value");
      return argv[++i];
    };
    if (argv[i] == "--kind")
      kind = value("--kind");
    else if (argv[i] == "--output")
      output = value("--output");
    else if (argv[i].starts_with("--"))
      throw UsageError("unknown flag " + argv[i] + " (vime plugin --help)");
    else if (name.empty())
      name = argv[i];
    else
      throw UsageError("unexpected argument '" + argv[i] + "'");
  }
  if (kind.empty()) throw UsageError("--kind is required (vime plugin --help lists the kinds)");
  if (name.empty()) throw UsageError("a plugin NAME is required");
  std::filesystem::path dir =
      output.empty() ? std::filesystem::path(name) : std::filesystem::path(output);
  for (const auto& file : plugin::write_plugin_scaffold(kind, name, dir))
    std::printf("wrote %s\n", file.c_str());
  std::printf(
      "build: cmake -S %s -B %s/build -DCMAKE_PREFIX_PATH=<vime install prefix> && cmake --build "
      "%s/build\n",
      dir.c_str(), dir.c_str(), dir.c_str());
  return 0;
}

}  // namespace

int run_plugin(const Arguments& argv) {
  if (argv.empty() || argv[0] == "--help" || argv[0] == "-h") {
    std::string kinds;
    for (const auto& k : plugin::scaffold_kinds()) kinds += (kinds.empty() ? "" : ", ") + k;
    std::printf("%s%s\n", kUsage, kinds.c_str());
    return argv.empty() ? 2 : 0;
  }
  Arguments rest(argv.begin() + 1, argv.end());
  if (argv[0] == "inspect") return inspect(rest);
  if (argv[0] == "new") return create(rest);
  throw UsageError("unknown plugin command '" + argv[0] + "' (inspect or new)");
}

}  // namespace vime::app
