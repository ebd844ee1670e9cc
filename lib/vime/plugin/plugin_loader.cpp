#include "vime/plugin/plugin_loader.hpp"

#include <boost/dll/shared_library.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>

#include "vime/error.hpp"

namespace vime::plugin {

class LoadedLibrary {
 public:
  explicit LoadedLibrary(boost::dll::shared_library lib) : lib_(std::move(lib)) {}
  boost::dll::shared_library& lib() { return lib_; }

 private:
  boost::dll::shared_library lib_;
};

namespace {

namespace fs = std::filesystem;

bool has_elf_magic(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  in.read(magic, 4);
  return in.gcount() == 4 && std::memcmp(magic,
                                         "\x7f"
                                         "ELF",
                                         4) == 0;
}

std::string prefix(std::string_view flag, const std::string& path) {
  return flag.empty() ? path : std::string(flag) + ": " + path;
}

struct OpenedPlugin {
  std::shared_ptr<LoadedLibrary> library;
  uint32_t abi = 0;
  std::vector<const vime_plugin_export*> exports;
};

// Opens a plugin file and reads its ABI and export list; every failure is a UsageError.
OpenedPlugin open_plugin(const std::string& path, std::string_view flag) {
  // Libraries stay loaded for the life of the process (slime caches loaded functions the same way),
  // so the same file opened for two flags is one handle.
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<LoadedLibrary>> cache;

  std::error_code ec;
  if (!fs::exists(path, ec)) throw UsageError(prefix(flag, path) + " does not exist");
  if (fs::is_directory(path, ec))
    throw UsageError(prefix(flag, path) + " is a directory, not a plugin .so file");
  if (!has_elf_magic(path)) {
    throw UsageError(
        prefix(flag, path) +
        " is not a shared library (no ELF header); build plugins as CMake MODULE libraries, "
        "e.g. with `vime plugin new`");
  }
  std::string key = fs::canonical(path, ec).string();
  std::shared_ptr<LoadedLibrary> library;
  {
    std::lock_guard lock(mutex);
    auto it = cache.find(key);
    if (it != cache.end()) {
      library = it->second;
    } else {
      boost::dll::shared_library lib;
      boost::dll::fs::error_code load_error;
      lib.load(key, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local,
               load_error);
      if (load_error) {
        throw UsageError(prefix(flag, path) + " cannot be loaded: " + load_error.message() +
                         " (a missing dependency, or built for another machine?)");
      }
      library = std::make_shared<LoadedLibrary>(std::move(lib));
      cache.emplace(key, library);
    }
  }
  auto& lib = library->lib();
  if (!lib.has("vime_plugin_abi") || !lib.has("vime_plugin_exports")) {
    throw UsageError(
        prefix(flag, path) +
        " is not a vime plugin (it exports no vime_plugin_abi); mark its functions with the "
        "VIME_*_PLUGIN macros of <vime/hooks.hpp>");
  }
  OpenedPlugin opened;
  opened.library = library;
  opened.abi = lib.get<uint32_t()>("vime_plugin_abi")();
  if (opened.abi != VIME_PLUGIN_ABI) {
    throw UsageError(prefix(flag, path) + " was built for vime plugin ABI " +
                     std::to_string(opened.abi) + ", but this vime has ABI " +
                     std::to_string(VIME_PLUGIN_ABI) + "; rebuild the plugin against this vime");
  }
  uint32_t count = 0;
  const vime_plugin_export* const* items =
      lib.get<const vime_plugin_export* const*(uint32_t*)>("vime_plugin_exports")(&count);
  for (uint32_t i = 0; i < count; ++i) opened.exports.push_back(items[i]);
  return opened;
}

std::string export_list_text(const OpenedPlugin& p) {
  if (p.exports.empty()) return "it exports nothing";
  std::string out = "it exports: ";
  for (size_t i = 0; i < p.exports.size(); ++i) {
    const auto* e = p.exports[i];
    out += (i ? ", " : "") + std::string(e->name) + " (" +
           plugin_kind_name(static_cast<PluginKind>(e->kind)) + ")";
  }
  return out;
}

}  // namespace

PluginSpec parse_plugin_spec(std::string_view text) {
  PluginSpec spec{std::string(text), {}};
  auto colon = text.rfind(':');
  if (colon != std::string_view::npos && text.find('/', colon) == std::string_view::npos &&
      colon + 1 < text.size()) {
    std::error_code ec;
    // A file whose name really contains ':' wins over the lib.so:symbol reading.
    if (!fs::exists(std::string(text), ec)) {
      spec.path = std::string(text.substr(0, colon));
      spec.symbol = std::string(text.substr(colon + 1));
    }
  }
  return spec;
}

PluginInfo inspect_plugin(const std::string& path, std::string_view flag) {
  OpenedPlugin opened = open_plugin(path, flag);
  PluginInfo info;
  info.path = path;
  info.abi = opened.abi;
  for (const auto* e : opened.exports)
    info.exports.push_back({e->name, static_cast<PluginKind>(e->kind), e->abi});
  return info;
}

LoadedExport load_export(std::string_view spec_text, std::string_view flag, PluginKind kind,
                         std::string_view default_symbol) {
  PluginSpec spec = parse_plugin_spec(spec_text);
  OpenedPlugin opened = open_plugin(spec.path, flag);
  const std::string kind_name = plugin_kind_name(kind);

  const vime_plugin_export* chosen = nullptr;
  auto by_name = [&](std::string_view name) -> const vime_plugin_export* {
    for (const auto* e : opened.exports) {
      if (name == e->name) return e;
    }
    return nullptr;
  };
  if (!spec.symbol.empty()) {
    chosen = by_name(spec.symbol);
    if (chosen == nullptr) {
      throw UsageError(prefix(flag, spec.path) + " has no plugin named '" + spec.symbol + "'; " +
                       export_list_text(opened));
    }
  } else {
    chosen = by_name(default_symbol);
    if (chosen == nullptr || chosen->kind != static_cast<uint32_t>(kind)) {
      std::vector<const vime_plugin_export*> of_kind;
      for (const auto* e : opened.exports) {
        if (e->kind == static_cast<uint32_t>(kind)) of_kind.push_back(e);
      }
      if (of_kind.size() == 1) {
        chosen = of_kind[0];
      } else if (of_kind.empty()) {
        throw UsageError(prefix(flag, spec.path) + " exports no " + kind_name + " plugin, which " +
                         std::string(flag) + " needs; " + export_list_text(opened));
      } else {
        throw UsageError(prefix(flag, spec.path) + " exports " + std::to_string(of_kind.size()) +
                         " " + kind_name + " plugins; choose one with " + spec.path + ":" +
                         of_kind[0]->name);
      }
    }
  }
  if (chosen->abi != VIME_PLUGIN_ABI) {
    throw UsageError(prefix(flag, spec.path) + ":" + chosen->name +
                     " was built for vime plugin ABI " + std::to_string(chosen->abi) +
                     ", but this vime has ABI " + std::to_string(VIME_PLUGIN_ABI) +
                     "; rebuild the plugin against this vime");
  }
  if (chosen->kind != static_cast<uint32_t>(kind)) {
    throw UsageError(prefix(flag, spec.path) + ":" + chosen->name + " is a " +
                     plugin_kind_name(static_cast<PluginKind>(chosen->kind)) + " plugin, but " +
                     std::string(flag) + " needs a " + kind_name + " plugin");
  }
  return {opened.library, chosen->fn, spec.path + ":" + chosen->name};
}

}  // namespace vime::plugin
