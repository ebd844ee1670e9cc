// vime::Args: the resolved configuration of a run, the `args` namespace of slime. Keys are slime's
// dests
// (`rollout_batch_size`), plus any key from --custom-config-path. Plugins receive it read-only.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "vime/json.hpp"

namespace vime {

// Where a value came from, lowest precedence first.
enum class ArgSource { kDefault, kConfigFile, kCustomConfig, kCommandLine, kDerived };
const char* arg_source_name(ArgSource source);

// A flag vime forwards verbatim to vLLM or vllm-router: {"--vllm-gpu-memory-utilization", {"0.7"}}.
struct PassthroughFlag {
  std::string name;
  std::vector<std::string> values;  // empty for a bare switch
};

class Args {
 public:
  Args();
  ~Args();
  Args(const Args& other);
  Args& operator=(const Args& other);
  Args(Args&&) noexcept;
  Args& operator=(Args&&) noexcept;

  bool has(std::string_view key) const;     // a known key (a flag's dest or a custom-config key)
  bool is_set(std::string_view key) const;  // known and not None
  // The raw value (null for None). Throws vime::Error naming the key when it is unknown.
  const Json& get(std::string_view key) const;

  // Typed access; throws vime::Error naming the flag when the value is None or of another type.
  bool get_bool(std::string_view key) const;
  int64_t get_int(std::string_view key) const;
  double get_double(std::string_view key) const;
  std::string get_string(std::string_view key) const;
  std::vector<std::string> get_string_list(std::string_view key) const;  // None -> empty
  std::vector<int64_t> get_int_list(std::string_view key) const;         // None -> empty
  std::optional<int64_t> get_optional_int(std::string_view key) const;
  std::optional<double> get_optional_double(std::string_view key) const;
  std::optional<std::string> get_optional_string(std::string_view key) const;

  // `flag` is the command-line spelling shown in messages ("--rollout-batch-size"); empty for keys
  // that are no flag (custom config).
  void set(std::string_view key, Json value, ArgSource source, std::string_view flag = {});
  ArgSource source(std::string_view key) const;
  // "--rollout-batch-size" for a flag's dest, the key itself otherwise.
  std::string flag_name(std::string_view key) const;
  std::vector<std::string> keys() const;  // sorted

  std::vector<PassthroughFlag>& vllm_passthrough();
  const std::vector<PassthroughFlag>& vllm_passthrough() const;
  std::vector<PassthroughFlag>& router_passthrough();
  const std::vector<PassthroughFlag>& router_passthrough() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace vime
