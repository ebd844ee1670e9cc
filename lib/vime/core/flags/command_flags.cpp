#include "vime/core/flags/command_flags.hpp"

#include <algorithm>
#include <initializer_list>
#include <string_view>

#include "vime/core/arg_parser.hpp"
#include "vime/error.hpp"

namespace vime::core::flags {

namespace {

// The groups of `vime train`'s flags named in `names`, in its order.
std::vector<FlagGroup> train_groups(std::initializer_list<std::string_view> names) {
  std::vector<FlagGroup> out;
  for (const auto& group : FlagRegistry::instance().groups()) {
    if (std::find(names.begin(), names.end(), group.name) != names.end()) out.push_back(group);
  }
  if (out.size() != names.size()) throw Error("internal: a flag group named here is not train's");
  return out;
}

const FlagRegistry& model_base() {
  static const FlagRegistry registry("convert-hf", train_groups({"model"}));
  return registry;
}

}  // namespace

Args parse_with_train_defaults(std::span<const std::string> tokens, const FlagRegistry& registry) {
  Args args = parse_args(tokens, registry);
  for (const auto& group : FlagRegistry::instance().groups()) {
    for (const auto& spec : group.flags) {
      if (!args.has(dest_of(spec)))
        args.set(dest_of(spec), default_value(spec), ArgSource::kDefault, spec.name);
    }
  }
  return args;
}

const FlagRegistry& eval_flags() {
  // What an eval rollout reads: the model and its checkpoint, the engine and sampling, prompt keys,
  // rewards, the eval datasets, metrics sinks; not training, parallelism or vLLM.
  static const FlagRegistry registry(
      "eval", train_groups({"general", "rollout", "data", "eval", "checkpoint", "reward", "hooks",
                            "logging", "model", "precision"}));
  return registry;
}

const FlagRegistry& serve_flags() {
  static const FlagRegistry engine("serve",
                                   train_groups({"rollout", "checkpoint", "model", "precision"}));
  static const FlagRegistry registry("serve", {serve_command()}, engine);
  return registry;
}

const FlagRegistry& reward_flags() {
  static const FlagRegistry rewards("reward", train_groups({"reward"}));
  static const FlagRegistry registry("reward", {reward_command()}, rewards);
  return registry;
}

const FlagRegistry& logprobs_flags() {
  static const FlagRegistry registry("logprobs", {logprobs_command()});
  return registry;
}

const FlagRegistry& tokenize_flags() {
  static const FlagRegistry registry("tokenize", {tokenize_command()});
  return registry;
}

const FlagRegistry& from_hf_flags() {
  static const FlagRegistry registry("convert-hf", {convert_hf_from_hf()}, model_base());
  return registry;
}

const FlagRegistry& to_hf_flags() {
  static const FlagRegistry registry("convert-hf", {convert_hf_to_hf()});
  return registry;
}

const FlagRegistry& convert_hf_help_flags() {
  static const FlagRegistry registry("convert-hf", {convert_hf_from_hf(), convert_hf_to_hf()},
                                     model_base());
  return registry;
}

const FlagRegistry& plugin_flags() {
  static const FlagRegistry registry("plugin", {plugin_command()});
  return registry;
}

const FlagRegistry& retrieve_flags() {
  static const FlagRegistry registry("retrieve", {retrieve_command()});
  return registry;
}

std::vector<const FlagRegistry*> command_registries() {
  return {&eval_flags(),     &serve_flags(),   &reward_flags(), &logprobs_flags(),
          &tokenize_flags(), &from_hf_flags(), &to_hf_flags(),  &convert_hf_help_flags(),
          &plugin_flags(),   &retrieve_flags()};
}

}  // namespace vime::core::flags
