// The plugin ABI: how a .so tells vime what it exports. A plugin is a MODULE library that includes
// <vime/hooks.hpp> (or <vime/train_hooks.hpp>) and marks each function with one export macro:
//
//   #include <vime/hooks.hpp>
//   vime::Json my_reward(const vime::Args& args, const vime::Sample& sample) { ... }
//   VIME_REWARD_PLUGIN(my_reward)
//
// Users then pass `--custom-rm-path path/to/libmine.so[:my_reward]`. vime checks, before the first
// call, that the file is a vime plugin built for this VIME_PLUGIN_ABI and that the export has the
// kind the flag needs; each macro checks at compile time that the function has the signature of its
// kind.
#pragma once

#include <cstdint>
#include <type_traits>

// Bumped whenever a type or signature in lib/include/vime changes incompatibly.
#define VIME_PLUGIN_ABI 3u  // 3: routed experts in GenerateRequest/Response and TrainData

namespace vime {

enum class PluginKind : uint32_t {
  kRollout = 1,            // --rollout-function-path, --eval-function-path
  kGenerate,               // --custom-generate-function-path
  kSampleHook,             // --rollout-sample-hook-path
  kReward,                 // --custom-rm-path
  kGroupReward,            // --custom-rm-path with --group-rm
  kDynamicFilter,          // --dynamic-sampling-filter-path
  kBufferFilter,           // --buffer-filter-path
  kSampleFilter,           // --rollout-sample-filter-path
  kAllSamplesProcess,      // --rollout-all-samples-process-path
  kRewardPostProcess,      // --custom-reward-post-process-path
  kConvertSamples,         // --custom-convert-samples-to-train-data-path
  kRolloutLog,             // --custom-rollout-log-function-path
  kEvalRolloutLog,         // --custom-eval-rollout-log-function-path
  kDataSource,             // --data-source-path
  kInitHook,               // --custom-megatron-init-path
  kUpdateWeightPostWrite,  // --custom-update-weight-post-write-path
  // Kinds whose signatures take tensors (vime/train_hooks.hpp)
  kRolloutDataPostprocess = 100,  // --rollout-data-postprocess-path
  kLoss,                          // --custom-loss-function-path
  kAdvantage,                     // --custom-advantage-function-path
  kTis,                           // --custom-tis-function-path
  kPgLossReducer,                 // --custom-pg-loss-reducer-function-path
  kBeforeLogProbHook,             // --custom-megatron-before-log-prob-hook-path
  kBeforeTrainStepHook,           // --custom-megatron-before-train-step-hook-path
  kModelProvider,                 // --custom-model-provider-path
};

// "reward", "dynamic_filter", ...: the names `vime plugin inspect` and error messages use.
constexpr const char* plugin_kind_name(PluginKind kind) {
  switch (kind) {
    case PluginKind::kRollout:
      return "rollout";
    case PluginKind::kGenerate:
      return "generate";
    case PluginKind::kSampleHook:
      return "sample_hook";
    case PluginKind::kReward:
      return "reward";
    case PluginKind::kGroupReward:
      return "group_reward";
    case PluginKind::kDynamicFilter:
      return "dynamic_filter";
    case PluginKind::kBufferFilter:
      return "buffer_filter";
    case PluginKind::kSampleFilter:
      return "sample_filter";
    case PluginKind::kAllSamplesProcess:
      return "all_samples_process";
    case PluginKind::kRewardPostProcess:
      return "reward_post_process";
    case PluginKind::kConvertSamples:
      return "convert_samples";
    case PluginKind::kRolloutLog:
      return "rollout_log";
    case PluginKind::kEvalRolloutLog:
      return "eval_rollout_log";
    case PluginKind::kDataSource:
      return "data_source";
    case PluginKind::kInitHook:
      return "init_hook";
    case PluginKind::kUpdateWeightPostWrite:
      return "update_weight_post_write";
    case PluginKind::kRolloutDataPostprocess:
      return "rollout_data_postprocess";
    case PluginKind::kLoss:
      return "loss";
    case PluginKind::kAdvantage:
      return "advantage";
    case PluginKind::kTis:
      return "tis";
    case PluginKind::kPgLossReducer:
      return "pg_loss_reducer";
    case PluginKind::kBeforeLogProbHook:
      return "before_log_prob_hook";
    case PluginKind::kBeforeTrainStepHook:
      return "before_train_step_hook";
    case PluginKind::kModelProvider:
      return "model_provider";
  }
  return "unknown";
}

// The function type of each kind; specialised in hooks.hpp and train_hooks.hpp.
template <PluginKind K>
struct PluginSignature;

}  // namespace vime

extern "C" {
// One exported function, as vime reads it from the plugin. Plain C layout.
struct vime_plugin_export {
  uint32_t abi;      // VIME_PLUGIN_ABI the plugin was compiled with
  uint32_t kind;     // a vime::PluginKind
  const char* name;  // what users write after ':' in lib.so:name
  const void* fn;    // the function, of type PluginSignature<kind>::type
};
}

namespace vime::plugin_detail {

struct ExportList {
  static constexpr uint32_t kCapacity = 256;
  const vime_plugin_export* items[kCapacity] = {};
  uint32_t count = 0;
  bool add(const vime_plugin_export* e) {
    if (count < kCapacity) items[count++] = e;
    return true;
  }
};

// Hidden, so each plugin .so keeps its own list even when built with default visibility.
__attribute__((visibility("hidden"))) inline ExportList& export_list() {
  static ExportList list;
  return list;
}

}  // namespace vime::plugin_detail

#ifndef VIME_BUILDING_LIBVIME
// The two symbols vime looks up in every plugin. Inline and `used`, so any number of translation
// units of one plugin may include this header; libvime itself never defines them.
extern "C" inline __attribute__((used, visibility("default"))) uint32_t vime_plugin_abi() {
  return VIME_PLUGIN_ABI;
}
extern "C" inline __attribute__((used, visibility("default"))) const vime_plugin_export* const*
vime_plugin_exports(uint32_t* count) {
  *count = ::vime::plugin_detail::export_list().count;
  return ::vime::plugin_detail::export_list().items;
}
#endif

// Exports FN as a plugin of KIND under the name #FN. Use the per-kind macros below.
#define VIME_EXPORT_PLUGIN(KIND, FN)                                                           \
  static_assert(std::is_same_v<decltype(FN), ::vime::PluginSignature<KIND>::type>,             \
                "vime plugin " #FN                                                             \
                " does not have the signature its kind needs (see vime/hooks.hpp)");           \
  namespace {                                                                                  \
  const ::vime_plugin_export vime_export_##FN = {VIME_PLUGIN_ABI, static_cast<uint32_t>(KIND), \
                                                 #FN, reinterpret_cast<const void*>(&FN)};     \
  [[maybe_unused]] const bool vime_registered_##FN =                                           \
      ::vime::plugin_detail::export_list().add(&vime_export_##FN);                             \
  }
