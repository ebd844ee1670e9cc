#include "vime/loop/run_models_options.hpp"

#include <string>

#include "vime/core/args_lookup.hpp"
#include "vime/error.hpp"

namespace vime::loop {
namespace {

using core::flag_on;
using core::int_if_set;
using core::string_if_set;

}  // namespace

RunModelsOptions RunModelsOptions::from(const Args& args) {
  RunModelsOptions o;
  if (flag_on(args, "bf16")) {
    o.dtype = at::kBFloat16;
  } else if (flag_on(args, "fp16")) {
    o.dtype = at::kHalf;
  }
  o.hf_checkpoint = string_if_set(args, "hf_checkpoint");
  o.tokenizer_path = string_if_set(args, "tokenizer_path");
  o.load = string_if_set(args, "load");
  o.ckpt_step = int_if_set(args, "ckpt_step");
  o.ref_load = string_if_set(args, "ref_load");
  o.ref_ckpt_step = int_if_set(args, "ref_ckpt_step");
  if (flag_on(args, "use_opd") && string_if_set(args, "opd_type") == std::string("megatron")) {
    o.opd_teacher_load = string_if_set(args, "opd_teacher_load");
    o.opd_teacher_ckpt_step = int_if_set(args, "opd_teacher_ckpt_step");
  }
  o.tensor_parallel_size = static_cast<int>(args.get_int("tensor_model_parallel_size"));
  o.context_parallel_size = static_cast<int>(args.get_int("context_parallel_size"));
  o.expert_parallel_size = static_cast<int>(args.get_int("expert_model_parallel_size"));
  const auto etp = int_if_set(args, "expert_tensor_parallel_size");
  if (o.expert_parallel_size > 1 && etp && *etp != 1) {
    throw UsageError("--expert-tensor-parallel-size " + std::to_string(*etp) +
                     " with --expert-model-parallel-size " +
                     std::to_string(o.expert_parallel_size) +
                     ": vime runs each expert whole on its expert-parallel rank; give "
                     "--expert-tensor-parallel-size 1");
  }
  return o;
}

Args with_run_defaults(Args args) {
  if (!args.is_set("ref_load") && args.is_set("hf_checkpoint")) {
    args.set("ref_load", args.get("hf_checkpoint"), ArgSource::kDerived);
  }
  return args;
}

}  // namespace vime::loop
