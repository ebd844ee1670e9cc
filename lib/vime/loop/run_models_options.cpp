#include "vime/loop/run_models_options.hpp"

namespace vime::loop {
namespace {

// Tolerant of keys the Args do not have (vime serve parses its own flags into them).
bool on(const Args& args, std::string_view key) { return args.has(key) && args.get_bool(key); }
std::optional<std::string> string_if_set(const Args& args, std::string_view key) {
  return args.has(key) && args.is_set(key) ? std::optional<std::string>(args.get_string(key))
                                           : std::nullopt;
}
std::optional<int64_t> int_if_known(const Args& args, std::string_view key) {
  return args.has(key) ? args.get_optional_int(key) : std::nullopt;
}

}  // namespace

RunModelsOptions RunModelsOptions::from(const Args& args) {
  RunModelsOptions o;
  if (on(args, "bf16")) {
    o.dtype = at::kBFloat16;
  } else if (on(args, "fp16")) {
    o.dtype = at::kHalf;
  }
  o.hf_checkpoint = string_if_set(args, "hf_checkpoint");
  o.tokenizer_path = string_if_set(args, "tokenizer_path");
  o.load = string_if_set(args, "load");
  o.ckpt_step = int_if_known(args, "ckpt_step");
  o.ref_load = string_if_set(args, "ref_load");
  o.ref_ckpt_step = int_if_known(args, "ref_ckpt_step");
  return o;
}

Args with_run_defaults(Args args) {
  if (!args.is_set("ref_load") && args.is_set("hf_checkpoint")) {
    args.set("ref_load", args.get("hf_checkpoint"), ArgSource::kDerived);
  }
  return args;
}

}  // namespace vime::loop
