#include "vime/train/trainable_params.hpp"

#include <vector>

#include "vime/core/args_lookup.hpp"
#include "vime/error.hpp"
#include "vime/model/moe.hpp"
#include "vime/regex.hpp"

namespace vime::train {
namespace {

struct Patterns {
  std::string flag;
  std::vector<Regex> regexes;

  bool any_found_in(const std::string& name) const {
    for (const auto& r : regexes)
      if (r.matches_anywhere(name)) return true;
    return false;
  }
};

Patterns patterns_of(const Args& args, const char* key) {
  Patterns p;
  p.flag = args.flag_name(key);
  for (const auto& pattern : args.get_string_list(key)) {
    try {
      p.regexes.emplace_back(pattern);
    } catch (const Error& e) {
      throw UsageError(p.flag + ": " + e.what());
    }
  }
  return p;
}

}  // namespace

NamedTensorList trainable_parameters(Model& model, const Args& args) {
  const bool only = core::flag_set(args, "only_train_params_name_list");
  const bool freeze = core::flag_set(args, "freeze_params_name_list");
  if (model.has_lora()) {
    if (only || freeze) {
      throw UsageError(
          args.flag_name(only ? "only_train_params_name_list" : "freeze_params_name_list") +
          " cannot be combined with --lora-rank: LoRA trains the adapters only");
    }
    return model.lora_parameters();
  }
  // The routers' correction biases are checkpoint tensors that are never trained.
  if (!only && !freeze) {
    NamedTensorList all;
    for (const auto& [name, param] : model.named_parameters())
      if (!is_expert_bias(name)) all.emplace_back(name, param);
    return all;
  }
  const Patterns patterns =
      patterns_of(args, only ? "only_train_params_name_list" : "freeze_params_name_list");
  NamedTensorList trainable;
  for (const auto& [name, param] : model.named_parameters()) {
    if (is_expert_bias(name)) continue;
    const bool trains = patterns.any_found_in(name) == only;
    param.set_requires_grad(trains);
    if (trains) trainable.emplace_back(name, param);
  }
  if (trainable.empty()) {
    throw UsageError(patterns.flag + " leaves no parameter to train (names look like " +
                     model.named_parameters().front().first + ")");
  }
  return trainable;
}

}  // namespace vime::train
