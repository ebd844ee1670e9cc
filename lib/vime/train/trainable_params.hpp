// --only-train-params-name-list / --freeze-params-name-list, as slime applies them to Megatron's
// model: each pattern is searched (Python's re.search) in every parameter name; a frozen parameter
// gets requires_grad = false and stays out of the optimizer. vime's names are the HF ones
// (model.layers.0.mlp.up_proj.weight, model.embed_tokens.weight, lm_head.weight).
#pragma once

#include "vime/args.hpp"
#include "vime/model/model.hpp"
#include "vime/train/optimizer.hpp"

namespace vime::train {

// The parameters of `model` that train under the flags (all of them when neither is set); marks
// the others requires_grad = false. A model with LoRA adapters trains them alone. Throws UsageError
// naming the flag on a pattern that does not compile, and when the flags leave nothing to train.
NamedTensorList trainable_parameters(Model& model, const Args& args);

}  // namespace vime::train
