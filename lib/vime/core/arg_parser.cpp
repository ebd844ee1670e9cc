#include "vime/core/arg_parser.hpp"

#include <algorithm>
#include <cstdlib>

#include "vime/core/yaml_json.hpp"
#include "vime/error.hpp"

namespace vime::core {
namespace {

bool looks_like_number(std::string_view s) {
  if (s.empty()) return false;
  char* end = nullptr;
  std::string copy(s);
  std::strtod(copy.c_str(), &end);
  return end == copy.c_str() + copy.size();
}

// argparse's rule: a token starting with '-' is an option unless it reads as a negative number.
bool looks_like_flag(std::string_view s) {
  return s.size() > 1 && s[0] == '-' && !looks_like_number(s);
}

bool is_passthrough(std::string_view name) {
  return name.starts_with("--vllm-") || name.starts_with("--router-");
}

// vLLM engine arguments the orchestrator sets itself (vime's vllm_utils/arguments.py skips the same
// dests), with the vime flag that decides each.
struct OwnedVllmFlag {
  std::string_view name;
  std::string_view decided_by;
};
constexpr OwnedVllmFlag kOwnedVllmFlags[] = {
    {"--vllm-model", "--hf-checkpoint"},
    {"--vllm-served-model-name", "--model-name"},
    {"--vllm-tokenizer", "--hf-checkpoint"},
    {"--vllm-trust-remote-code", "vime (always on)"},
    {"--vllm-dtype", "--bf16/--fp16 (the trainer's dtype; float32 without them)"},
    {"--vllm-seed", "--seed (engine i gets seed + i)"},
    {"--vllm-tensor-parallel-size", "--rollout-num-gpus-per-engine"},
    {"--vllm-nnodes", "--rollout-num-gpus and --rollout-num-gpus-per-engine"},
    {"--vllm-node-rank", "vime's engine launcher"},
    {"--vllm-master-addr", "vime's engine launcher"},
    {"--vllm-master-port", "vime's engine launcher"},
    {"--vllm-data-parallel-backend", "vime's engine launcher"},
    {"--vllm-distributed-executor-backend", "vime's engine launcher"},
    {"--vllm-port", "vime's engine launcher (free ports)"},
    {"--vllm-host", "vime's engine launcher"},
    {"--vllm-enable-return-routed-experts", "--use-rollout-routing-replay"},
};

void reject_owned_vllm_flag(const std::string& name) {
  for (const auto& owned : kOwnedVllmFlags) {
    if (owned.name == name) {
      throw UsageError(name + " is set by vime from " + std::string(owned.decided_by) +
                       "; drop it from the command line");
    }
  }
}

std::string setting_text(const FlagSpec& spec, const Json& value) {
  if (is_switch(spec)) {
    if (spec.kind == FlagKind::kBoolOptional && value.is_bool() && !value.as_bool()) {
      return "--no-" + std::string(spec.name.substr(2));
    }
    return std::string(spec.name);
  }
  return std::string(spec.name) + " " + display_value(value);
}

// Value of a switch given as a flag (`--x` or `--no-x`).
Json switch_value(const FlagSpec& spec, bool negated) {
  if (spec.kind == FlagKind::kStoreFalse) return Json(false);
  return Json(!negated);
}

// Tokens for a flag given in a YAML file: a scalar is one token, a list several.
std::vector<std::string> yaml_tokens(const Json& value) {
  std::vector<std::string> out;
  if (value.is_array()) {
    for (const auto& e : value.as_array()) out.push_back(display_value(e));
  } else {
    out.push_back(display_value(value));
  }
  return out;
}

void apply_passthrough(Args& args, const std::string& name, std::vector<std::string> values) {
  auto& list = name.starts_with("--vllm-") ? args.vllm_passthrough() : args.router_passthrough();
  for (auto& f : list) {
    if (f.name == name) {  // a repeated flag: the last one wins, as in argparse
      f.values = std::move(values);
      return;
    }
  }
  list.push_back({name, std::move(values)});
}

// Sets a known flag from a YAML key. `by_dest` means the key was the dest (`add_bias_linear:
// false`, the value itself); otherwise it was the flag name (`disable-bias-linear: true`, "the flag
// is given").
void set_from_yaml(Args& args, const FlagSpec& spec, bool by_dest, const Json& value,
                   ArgSource source, const std::string& where) {
  const std::string dest = dest_of(spec);
  if (value.is_null()) {
    args.set(dest, Json(), source, spec.name);
    return;
  }
  if (is_switch(spec)) {
    if (!value.is_bool()) {
      throw UsageError(where + ": " + std::string(spec.name) + " takes true or false, not " +
                       value.dump());
    }
    bool v = value.as_bool();
    if (!by_dest && spec.kind == FlagKind::kStoreFalse) v = !v;
    args.set(dest, Json(v), source, spec.name);
    return;
  }
  try {
    auto tokens = yaml_tokens(value);
    Json converted = convert_tokens(spec, tokens);
    if (spec.kind == FlagKind::kJson && !value.is_string())
      converted = value;  // a YAML mapping is fine
    args.set(dest, std::move(converted), source, spec.name);
  } catch (const UsageError& e) {
    throw UsageError(where + ": " + e.what());
  }
}

void apply_config_file(Args& args, const Json& doc, const FlagRegistry& registry,
                       const std::string& where) {
  if (doc.is_null()) return;
  if (!doc.is_object()) throw UsageError(where + ": expected a mapping of flag names to values");
  for (const auto& [key, value] : doc.as_object()) {
    if (key == "vllm_passthrough" || key == "router_passthrough") {
      if (!value.is_object()) throw UsageError(where + ": " + key + " must be a mapping");
      for (const auto& [name, v] : value.as_object()) {
        std::string flag = name.starts_with("--") ? name : "--" + name;
        apply_passthrough(args, flag, v.is_null() ? std::vector<std::string>{} : yaml_tokens(v));
      }
      continue;
    }
    const FlagGroup* section = nullptr;
    for (const auto& g : registry.groups()) {
      if (g.name == key) section = &g;
    }
    if (section != nullptr && value.is_object()) {  // the grouped layout that --dry-run prints
      apply_config_file(args, value, registry, where);
      continue;
    }
    if (key == "no_effect" || key == "custom_config" || key == "plugins" || key == "warnings")
      continue;  // informational sections of --dry-run
    std::string name = key.starts_with("--") ? key : "--" + key;
    bool negated = false;
    const FlagSpec* spec = registry.find(name, &negated);
    bool by_dest = false;
    if (spec == nullptr) {
      spec = registry.find_by_dest(key);
      by_dest = spec != nullptr;
    }
    if (spec == nullptr) {
      std::string hint =
          registry.nearest(name);  // "--a or --b": config keys are written without dashes
      for (size_t pos; (pos = hint.find("--")) != std::string::npos;) hint.erase(pos, 2);
      throw UsageError(where + ": unknown key '" + key + "'" +
                       (hint.empty() ? "" : "; did you mean " + hint + "?"));
    }
    if (negated) {
      if (!value.is_bool()) throw UsageError(where + ": " + key + " takes true or false");
      set_from_yaml(args, *spec, false, Json(!value.as_bool()), ArgSource::kConfigFile, where);
    } else {
      set_from_yaml(args, *spec, by_dest, value, ArgSource::kConfigFile, where);
    }
  }
}

[[noreturn]] void unknown_flag(const std::string& name, const FlagRegistry& registry) {
  if (name.starts_with("--sglang-")) {
    std::string hint;
    if (name == "--sglang-mem-fraction-static") hint = "--vllm-gpu-memory-utilization";
    if (name == "--sglang-router-ip") hint = "--vllm-router-ip";
    if (name == "--sglang-router-port") hint = "--vllm-router-port";
    if (name == "--sglang-server-concurrency") hint = "--vllm-server-concurrency";
    throw UsageError("unknown flag " + name + ": vime drives vLLM, not SGLang; " +
                     (hint.empty() ? "pass the vLLM engine argument as --vllm-<name>"
                                   : "use " + hint + " instead"));
  }
  std::string hint = registry.nearest(name);
  throw UsageError("unknown flag " + name + (hint.empty() ? "" : "; did you mean " + hint + "?") +
                   " (vime " + registry.command() + " --help lists every flag)");
}

// "--input is required", "--input and --output are required", "A, B and C are required".
void check_required(const Args& args, const FlagRegistry& registry) {
  std::vector<std::string_view> missing;
  for (const auto& group : registry.groups()) {
    for (const auto& spec : group.flags) {
      if (spec.required && !args.is_set(dest_of(spec))) missing.push_back(spec.name);
    }
  }
  if (missing.empty()) return;
  std::string names;
  for (size_t i = 0; i < missing.size(); ++i) {
    names += (i == 0 ? "" : (i + 1 == missing.size() ? " and " : ", ")) + std::string(missing[i]);
  }
  throw UsageError(names + (missing.size() == 1 ? " is" : " are") + " required (vime " +
                   registry.command() + " --help)");
}

}  // namespace

Args parse_args(std::span<const std::string> tokens, const FlagRegistry& registry) {
  Args args;
  for (const auto& group : registry.groups()) {
    for (const auto& spec : group.flags)
      args.set(dest_of(spec), default_value(spec), ArgSource::kDefault, spec.name);
  }

  // 1. --config files first, wherever they appear, so that the command line wins over them.
  const bool takes_config = registry.find("--config") != nullptr;
  for (size_t i = 0; takes_config && i < tokens.size(); ++i) {
    std::string path;
    if (tokens[i] == "--config" && i + 1 < tokens.size()) {
      path = tokens[i + 1];
    } else if (tokens[i].starts_with("--config=")) {
      path = tokens[i].substr(9);
    } else {
      continue;
    }
    apply_config_file(args, load_yaml_file(path, "--config"), registry, "--config " + path);
  }

  // 2. The command line. --vllm-* / --router-* flags pass through where the command has vLLM's
  // flags.
  const bool takes_passthrough = std::any_of(registry.groups().begin(), registry.groups().end(),
                                             [](const FlagGroup& g) { return g.name == "vllm"; });
  size_t positional = 0;
  for (size_t i = 0; i < tokens.size();) {
    const std::string& token = tokens[i++];
    if (!looks_like_flag(token) && positional < registry.positionals().size()) {
      const FlagSpec& spec = *registry.positionals()[positional++];
      args.set(dest_of(spec), convert_tokens(spec, std::span<const std::string>(&token, 1)),
               ArgSource::kCommandLine, spec.name);
      continue;
    }
    if (!looks_like_flag(token) || token == "--") {
      throw UsageError("unexpected argument '" + token +
                       "': flags start with --, and values follow their flag");
    }
    std::string name = token;
    std::vector<std::string> values;
    bool has_inline = false;
    if (auto eq = token.find('='); eq != std::string::npos) {
      name = token.substr(0, eq);
      values.push_back(token.substr(eq + 1));
      has_inline = true;
    }
    auto take_values = [&](bool many) {
      while (i < tokens.size() && !looks_like_flag(tokens[i])) {
        values.push_back(tokens[i++]);
        if (!many) break;
      }
    };

    bool negated = false;
    const FlagSpec* spec = registry.find(name, &negated);
    if (spec == nullptr) {
      if (!is_passthrough(name) || !takes_passthrough) unknown_flag(name, registry);
      reject_owned_vllm_flag(name);
      if (!has_inline) take_values(true);
      apply_passthrough(args, name, std::move(values));
      continue;
    }
    const std::string dest = dest_of(*spec);
    if (is_switch(*spec)) {
      if (has_inline) throw UsageError(name + " takes no value (got '" + values[0] + "')");
      args.set(dest, switch_value(*spec, negated), ArgSource::kCommandLine, spec->name);
      continue;
    }
    if (!has_inline) take_values(is_list(*spec));
    if (values.empty()) {
      throw UsageError(name +
                       (is_list(*spec) ? " expects one or more values" : " expects a value"));
    }
    Json value = convert_tokens(*spec, values);
    if (spec->kind == FlagKind::kStringAppend && args.source(dest) == ArgSource::kCommandLine) {
      Json merged = args.get(dest);
      for (const auto& v : value.as_array()) merged.push_back(v);
      value = std::move(merged);
    }
    args.set(dest, std::move(value), ArgSource::kCommandLine, spec->name);
  }

  // 3. --custom-config-path: free-form keys that plugins read (slime's setattr onto args). Known
  // keys are type-checked; the command line still wins over the file.
  if (args.has("custom_config_path") && args.is_set("custom_config_path")) {
    std::string path = args.get_string("custom_config_path");
    std::string where = "--custom-config-path " + path;
    Json doc = load_yaml_file(path, "--custom-config-path");
    if (!doc.is_null() && !doc.is_object())
      throw UsageError(where + ": expected a mapping of keys to values");
    if (doc.is_object()) {
      for (const auto& [key, value] : doc.as_object()) {
        const FlagSpec* spec = registry.find_by_dest(key);
        if (spec == nullptr) {
          args.set(key, value, ArgSource::kCustomConfig);
        } else if (args.source(key) != ArgSource::kCommandLine) {
          set_from_yaml(args, *spec, true, value, ArgSource::kCustomConfig, where);
        }
      }
    }
  }
  check_required(args, registry);
  return args;
}

std::vector<std::string> unsupported_settings(const Args& args, const FlagRegistry& registry) {
  std::vector<std::string> out;
  for (const auto& group : registry.groups()) {
    for (const auto& spec : group.flags) {
      if (spec.support != Support::kNotYet) continue;
      const Json& value = args.get(dest_of(spec));
      if (!(value == default_value(spec))) out.push_back(setting_text(spec, value));
    }
  }
  return out;
}

std::vector<std::string> no_effect_settings(const Args& args, const FlagRegistry& registry,
                                            std::string_view only_group) {
  std::vector<std::string> out;
  for (const auto& group : registry.groups()) {
    if (!only_group.empty() && group.name != only_group) continue;
    for (const auto& spec : group.flags) {
      if (spec.support != Support::kNoEffect) continue;
      const Json& value = args.get(dest_of(spec));
      if (!(value == default_value(spec))) out.push_back(setting_text(spec, value));
    }
  }
  return out;
}

void check_supported(const Args& args, const FlagRegistry& registry) {
  auto refused = unsupported_settings(args, registry);
  if (refused.empty()) return;
  std::string message;
  for (const auto& r : refused)
    message += (message.empty() ? "" : "; ") + r + " is not supported yet";
  throw UsageError(message);
}

}  // namespace vime::core
