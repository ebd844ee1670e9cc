// slime's TIS functions that --custom-tis-function-path names by their Python path, built in:
//   slime.backends.megatron_utils.loss.icepop_function (or "icepop"): w = ratio inside
//     [--tis-clip-low, --tis-clip], else 0;
//   examples.train_infer_mismatch_helper.mis.compute_mis_weights_with_cp (or "mis"): the MIS
//     example: mismatch metrics always; with --use-tis, IS weights at tis_level
//     (token|sequence|geometric) bounded by tis_mode (truncate|clip|mask), rejection sampling
//     (use_rs, rs_level, rs bounds, rs_veto_threshold) and tis_batch_normalize. Its settings are
//     --custom-config-path keys, as in the example's mis.yaml.
#pragma once

#include <optional>
#include <string_view>

#include "vime/args.hpp"
#include "vime/plugin/plugin_loader.hpp"
#include "vime/train_hooks.hpp"

namespace vime::train {

bool is_builtin_tis_name(std::string_view spec);
// The built-in that --custom-tis-function-path names, or nullopt for a plugin (or unset).
std::optional<plugin::PluginFunction<PluginKind::kTis>> builtin_tis_function(const Args& args);

TisOutput icepop_function(const Args& args, const TisInputs& inputs);
TisOutput mis_function(const Args& args, const TisInputs& inputs);

}  // namespace vime::train
