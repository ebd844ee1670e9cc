#include "vime/core/flags/command_flags.hpp"

namespace vime::core::flags {

const FlagRegistry& serve_flags() {
  static const FlagRegistry registry("serve", {serve_command()}, FlagRegistry::instance());
  return registry;
}

const FlagRegistry& reward_flags() {
  static const FlagRegistry registry("reward", {reward_command()}, FlagRegistry::instance());
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
  static const FlagRegistry registry("convert-hf", {convert_hf_from_hf()},
                                     FlagRegistry::instance());
  return registry;
}

const FlagRegistry& to_hf_flags() {
  static const FlagRegistry registry("convert-hf", {convert_hf_to_hf()});
  return registry;
}

const FlagRegistry& convert_hf_help_flags() {
  static const FlagRegistry registry("convert-hf", {convert_hf_from_hf(), convert_hf_to_hf()});
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
  return {&serve_flags(),           &reward_flags(),  &logprobs_flags(),
          &tokenize_flags(),        &from_hf_flags(), &to_hf_flags(),
          &convert_hf_help_flags(), &plugin_flags(),  &retrieve_flags()};
}

}  // namespace vime::core::flags
