#include "retool_config.hpp"

#include <cctype>
#include <cmath>

#include "vime/code_sandbox.hpp"
#include "vime/error.hpp"

namespace retool {
namespace {

const vime::Json* find(const vime::Args& args, const char* key) {
  return args.has(key) && args.is_set(key) ? &args.get(key) : nullptr;
}

[[noreturn]] void bad(const std::string& key, const std::string& want, const vime::Json& got) {
  throw vime::UsageError("retool: " + key + " (--custom-config-path) must be " + want + ", got " +
                         got.dump());
}

int64_t positive_int(const vime::Args& args, const char* key, int64_t fallback) {
  const vime::Json* v = find(args, key);
  if (!v) return fallback;
  if (!v->is_int() || v->as_int() < 1) bad(key, "an integer >= 1", *v);
  return v->as_int();
}

bool flag(const vime::Args& args, const char* key, bool fallback) {
  const vime::Json* v = find(args, key);
  if (!v) return fallback;
  if (!v->is_bool()) bad(key, "true or false", *v);
  return v->as_bool();
}

}  // namespace

int64_t parse_byte_size(const std::string& key, const vime::Json& value) {
  if (value.is_int() && value.as_int() > 0) return value.as_int();
  if (!value.is_string()) bad(key, "a size such as \"4GB\"", value);
  const std::string& text = value.as_string();
  size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  std::string unit = text.substr(digits);
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  int shift = -1;
  if (unit.empty() || unit == "B") shift = 0;
  if (unit == "KB" || unit == "K") shift = 10;
  if (unit == "MB" || unit == "M") shift = 20;
  if (unit == "GB" || unit == "G") shift = 30;
  if (digits == 0 || digits > 9 || shift < 0) bad(key, "a size such as \"4GB\"", value);
  const int64_t n = std::stoll(text.substr(0, digits));
  if (n < 1) bad(key, "a size such as \"4GB\"", value);
  return n << shift;
}

RetoolConfig RetoolConfig::from(const vime::Args& args) {
  RetoolConfig c;
  c.max_turns = positive_int(args, "max_turns", c.max_turns);
  c.max_tool_calls = positive_int(args, "max_tool_calls", c.max_tool_calls);
  c.python_safety_check = flag(args, "python_safety_check", c.python_safety_check);
  auto& s = c.sandbox;
  auto& l = s.limits;
  s.concurrency = positive_int(args, "tool_concurrency", 32);
  if (const vime::Json* v = find(args, "python_timeout")) {
    if (!v->is_number() || !(v->as_double() > 0)) bad("python_timeout", "a number > 0", *v);
    c.python_timeout = *v;
  }
  l.wall_timeout_s = c.python_timeout.as_double();
  l.cpu_seconds =
      positive_int(args, "python_cpu_seconds", static_cast<int64_t>(std::ceil(l.wall_timeout_s)));
  if (const vime::Json* v = find(args, "python_memory_limit")) {
    l.memory_bytes = parse_byte_size("python_memory_limit", *v);
  }
  if (const vime::Json* v = find(args, "python_file_size_limit")) {
    l.file_size_bytes = parse_byte_size("python_file_size_limit", *v);
  }
  l.open_files = positive_int(args, "python_max_open_files", l.open_files);
  l.processes = positive_int(args, "python_max_processes", l.processes);
  l.max_output_bytes = positive_int(args, "python_max_output_bytes", l.max_output_bytes);
  if (const vime::Json* v = find(args, "python_path")) {
    if (!v->is_string()) bad("python_path", "a string", *v);
    s.python = v->as_string();
  }
  s.allow_network = flag(args, vime::kSandboxAllowNetworkKey, false);
  s.host_filesystem = flag(args, vime::kSandboxHostFilesystemKey, false);
  if (const vime::Json* v = find(args, vime::kSandboxReadOnlyPathsKey)) {
    if (!v->is_array()) bad(vime::kSandboxReadOnlyPathsKey, "a list of paths", *v);
    for (const auto& p : v->as_array()) {
      if (!p.is_string()) bad(vime::kSandboxReadOnlyPathsKey, "a list of paths", *v);
      s.read_only_paths.push_back(p.as_string());
    }
  }
  return c;
}

std::string RetoolConfig::sandbox_key() const {
  const auto& s = sandbox;
  const auto& l = s.limits;
  std::string key = std::to_string(l.wall_timeout_s) + ' ' + std::to_string(l.cpu_seconds) + ' ' +
                    std::to_string(l.memory_bytes) + ' ' + std::to_string(l.file_size_bytes) + ' ' +
                    std::to_string(l.open_files) + ' ' + std::to_string(l.processes) + ' ' +
                    std::to_string(l.max_output_bytes) + ' ' + std::to_string(s.concurrency) + ' ' +
                    s.python + ' ' + (s.allow_network ? '1' : '0') +
                    (s.host_filesystem ? '1' : '0');
  for (const auto& p : s.read_only_paths) key += '\n' + p;
  return key;
}

}  // namespace retool
