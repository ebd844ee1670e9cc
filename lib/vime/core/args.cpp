#include "vime/args.hpp"

#include <map>

#include "vime/error.hpp"

namespace vime {

struct Args::Impl {
  struct Entry {
    Json value;
    ArgSource source = ArgSource::kDefault;
    std::string flag;
  };
  std::map<std::string, Entry, std::less<>> entries;
  std::vector<PassthroughFlag> vllm;
  std::vector<PassthroughFlag> router;

  const Entry& entry(std::string_view key) const {
    auto it = entries.find(key);
    if (it == entries.end()) throw Error("unknown configuration key '" + std::string(key) + "'");
    return it->second;
  }
};

const char* arg_source_name(ArgSource source) {
  switch (source) {
    case ArgSource::kDefault:
      return "default";
    case ArgSource::kConfigFile:
      return "config file";
    case ArgSource::kCustomConfig:
      return "custom config";
    case ArgSource::kCommandLine:
      return "command line";
    case ArgSource::kDerived:
      return "derived";
  }
  return "?";
}

Args::Args() : impl_(std::make_unique<Impl>()) {}
Args::~Args() = default;
Args::Args(const Args& other) : impl_(std::make_unique<Impl>(*other.impl_)) {}
Args& Args::operator=(const Args& other) {
  if (this != &other) *impl_ = *other.impl_;
  return *this;
}
Args::Args(Args&&) noexcept = default;
Args& Args::operator=(Args&&) noexcept = default;

bool Args::has(std::string_view key) const { return impl_->entries.contains(key); }

bool Args::is_set(std::string_view key) const {
  auto it = impl_->entries.find(key);
  return it != impl_->entries.end() && !it->second.value.is_null();
}

const Json& Args::get(std::string_view key) const { return impl_->entry(key).value; }

namespace {

template <class F>
auto typed(const Args& args, std::string_view key, const char* what, F&& convert) {
  const Json& v = args.get(key);
  if (v.is_null()) throw Error(args.flag_name(key) + " is not set (" + what + " expected)");
  try {
    return convert(v);
  } catch (const Error&) {
    throw Error(args.flag_name(key) + ": expected " + what + ", found " + v.dump());
  }
}

}  // namespace

bool Args::get_bool(std::string_view key) const {
  return typed(*this, key, "true or false", [](const Json& v) { return v.as_bool(); });
}
int64_t Args::get_int(std::string_view key) const {
  return typed(*this, key, "an integer", [](const Json& v) { return v.as_int(); });
}
double Args::get_double(std::string_view key) const {
  return typed(*this, key, "a number", [](const Json& v) { return v.as_double(); });
}
std::string Args::get_string(std::string_view key) const {
  return typed(*this, key, "a string", [](const Json& v) { return v.as_string(); });
}

std::vector<std::string> Args::get_string_list(std::string_view key) const {
  if (!is_set(key)) return {};
  return typed(*this, key, "a list of strings", [](const Json& v) {
    std::vector<std::string> out;
    for (const auto& e : v.as_array()) out.push_back(e.as_string());
    return out;
  });
}

std::vector<int64_t> Args::get_int_list(std::string_view key) const {
  if (!is_set(key)) return {};
  return typed(*this, key, "a list of integers", [](const Json& v) {
    std::vector<int64_t> out;
    for (const auto& e : v.as_array()) out.push_back(e.as_int());
    return out;
  });
}

std::optional<int64_t> Args::get_optional_int(std::string_view key) const {
  if (!is_set(key)) return std::nullopt;
  return get_int(key);
}
std::optional<double> Args::get_optional_double(std::string_view key) const {
  if (!is_set(key)) return std::nullopt;
  return get_double(key);
}
std::optional<std::string> Args::get_optional_string(std::string_view key) const {
  if (!is_set(key)) return std::nullopt;
  return get_string(key);
}

void Args::set(std::string_view key, Json value, ArgSource source, std::string_view flag) {
  auto& e = impl_->entries[std::string(key)];
  e.value = std::move(value);
  e.source = source;
  if (!flag.empty()) e.flag = std::string(flag);
}

ArgSource Args::source(std::string_view key) const { return impl_->entry(key).source; }

std::string Args::flag_name(std::string_view key) const {
  auto it = impl_->entries.find(key);
  if (it != impl_->entries.end() && !it->second.flag.empty()) return it->second.flag;
  return std::string(key);
}

std::vector<std::string> Args::keys() const {
  std::vector<std::string> out;
  out.reserve(impl_->entries.size());
  for (const auto& [k, _] : impl_->entries) out.push_back(k);
  return out;
}

std::vector<PassthroughFlag>& Args::vllm_passthrough() { return impl_->vllm; }
const std::vector<PassthroughFlag>& Args::vllm_passthrough() const { return impl_->vllm; }
std::vector<PassthroughFlag>& Args::router_passthrough() { return impl_->router; }
const std::vector<PassthroughFlag>& Args::router_passthrough() const { return impl_->router; }

}  // namespace vime
