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

}  // namespace vime::core
