// Reading a flag that the Args may not have: options builders shared by commands whose flag tables
// differ (vime serve's registry lacks some of train's flags) treat an unknown key like an unset
// one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "vime/args.hpp"

namespace vime::core {

inline bool flag_set(const Args& a, std::string_view key) { return a.has(key) && a.is_set(key); }
// True when the key is known, set, a bool and true.
inline bool flag_on(const Args& a, std::string_view key) {
  return flag_set(a, key) && a.get(key).is_bool() && a.get_bool(key);
}
inline std::optional<std::string> string_if_set(const Args& a, std::string_view key) {
  return flag_set(a, key) ? std::optional<std::string>(a.get_string(key)) : std::nullopt;
}
inline std::optional<int64_t> int_if_set(const Args& a, std::string_view key) {
  return flag_set(a, key) ? std::optional<int64_t>(a.get_int(key)) : std::nullopt;
}

// The key vLLM engines were started with (--vllm-api-key, or --router-api-key, which the router
// sends them), for "Authorization: Bearer"; "" when neither is given.
inline std::string engine_api_key(const Args& a) {
  std::string key;
  for (const auto* flags : {&a.router_passthrough(), &a.vllm_passthrough()})
    for (const auto& flag : *flags)
      if ((flag.name == "--vllm-api-key" || flag.name == "--router-api-key") &&
          !flag.values.empty())
        key = flag.values.front();
  return key;
}

}  // namespace vime::core
