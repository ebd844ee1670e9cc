// Loads plugin .so files with Boost.DLL and hands out typed functions, after checking (in this
// order) that the file exists, is a shared library, is a vime plugin, was built for this
// VIME_PLUGIN_ABI, and exports a function of the kind the flag needs. Each failure is one
// UsageError naming flag and file.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "vime/plugin.hpp"

namespace vime::plugin {

// "path/to/lib.so[:symbol]" split into its parts (the symbol may be empty).
struct PluginSpec {
  std::string path;
  std::string symbol;
};
PluginSpec parse_plugin_spec(std::string_view text);

struct ExportInfo {
  std::string name;
  PluginKind kind;
  uint32_t abi;
};

struct PluginInfo {
  std::string path;
  uint32_t abi = 0;
  std::vector<ExportInfo> exports;
};

// What a plugin file exports (for `vime plugin inspect`). `flag` names the flag in errors.
PluginInfo inspect_plugin(const std::string& path, std::string_view flag = "plugin");

class LoadedLibrary;  // keeps the .so loaded for as long as a function from it is held

// A function loaded from a plugin, callable like the function itself.
template <PluginKind K>
class PluginFunction {
 public:
  using Signature = typename PluginSignature<K>::type;
  PluginFunction() = default;
  PluginFunction(std::shared_ptr<LoadedLibrary> library, Signature* fn, std::string description)
      : library_(std::move(library)), fn_(fn), description_(std::move(description)) {}

  explicit operator bool() const { return fn_ != nullptr; }
  template <class... A>
  decltype(auto) operator()(A&&... a) const {
    return fn_(std::forward<A>(a)...);
  }
  const std::string& description() const { return description_; }  // "libx.so:my_reward"

 private:
  std::shared_ptr<LoadedLibrary> library_;
  Signature* fn_ = nullptr;
  std::string description_;
};

struct LoadedExport {
  std::shared_ptr<LoadedLibrary> library;
  const void* fn = nullptr;
  std::string description;
};

// Loads `spec` ("lib.so[:symbol]") for `flag`, which needs a plugin of `kind`. Without a symbol,
// the export named `default_symbol` is used, else the only export of that kind.
LoadedExport load_export(std::string_view spec, std::string_view flag, PluginKind kind,
                         std::string_view default_symbol);

template <PluginKind K>
PluginFunction<K> load_plugin(std::string_view spec, std::string_view flag,
                              std::string_view default_symbol) {
  LoadedExport e = load_export(spec, flag, K, default_symbol);
  using Signature = typename PluginSignature<K>::type;
  return PluginFunction<K>(std::move(e.library),
                           reinterpret_cast<Signature*>(const_cast<void*>(e.fn)),
                           std::move(e.description));
}

}  // namespace vime::plugin
