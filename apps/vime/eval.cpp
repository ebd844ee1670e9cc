// vime eval: evaluate a checkpoint (--load) or HF directory (--hf-checkpoint) on eval datasets with
// slime's eval flags; the eval rollout is the one `vime train` runs (lib/vime/loop/eval_run.hpp).
#include <cstdio>
#include <iostream>

#include "commands.hpp"
#include "vime/core/arg_parser.hpp"
#include "vime/core/arg_validation.hpp"
#include "vime/core/flags/command_flags.hpp"
#include "vime/core/help.hpp"
#include "vime/error.hpp"
#include "vime/loop/eval_run.hpp"
#include "vime/loop/hook_plugin_check.hpp"
#include "vime/plugin/rollout_plugin.hpp"

namespace vime::app {
namespace {

constexpr const char* kUsage =
    R"(usage: vime eval --hf-checkpoint DIR [--load CKPT] DATASETS [flags]

Generates on every eval dataset with the embedded engine, grades the responses and prints slime's
eval metrics (eval/NAME, eval/NAME-truncated_ratio, eval/NAME-pass@k with --log-passrate).
DATASETS: --dataset math|gsm8k|aime|gpqa [--dataset-path P], --eval-prompt-data NAME FILE ...,
or --eval-config YAML. --eval-output FILE writes one JSON line per sample.

  --help [GROUP]     all flags, or those of one group (e.g. --help eval)
)";

}  // namespace

int run_eval(const Arguments& argv) {
  if (auto code = help_exit_code(argv, kUsage, core::flags::eval_flags())) return *code;
  Args args = core::flags::parse_with_train_defaults(argv, core::flags::eval_flags());
  // A custom eval function (--eval-function-path) may bring its own prompts; the default eval
  // rollout has nothing to do without a dataset.
  if (!args.is_set("dataset") && !args.is_set("eval_prompt_data") && !args.is_set("eval_config") &&
      !args.is_set("eval_function_path")) {
    throw UsageError(
        "no eval dataset: pass --dataset math|gsm8k|aime|gpqa, --eval-prompt-data NAME FILE or "
        "--eval-config YAML");
  }
  plugin::resolve_rollout_plugin(args);
  // Training-only requirements do not apply to an eval run.
  if (!args.is_set("rollout_batch_size")) args.set("rollout_batch_size", 1, ArgSource::kDerived);
  if (!args.is_set("num_rollout") && !args.is_set("num_epoch")) {
    args.set("num_rollout", 0, ArgSource::kDerived);
  }
  for (const auto& w : core::validate_args(args)) {
    std::fprintf(stderr, "vime eval: warning: %s\n", w.c_str());
  }
  loop::check_hook_plugins(args);
  return loop::run_evaluation(args, std::cout);
}

}  // namespace vime::app
