// vime train: parse slime's flags (+ --config YAML), validate, check plugins; --dry-run prints the
// resolved configuration; otherwise runs the loop (lib/vime/loop/train_loop.hpp).
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "commands.hpp"
#include "vime/core/arg_parser.hpp"
#include "vime/core/arg_validation.hpp"
#include "vime/core/config_dump.hpp"
#include "vime/core/help.hpp"
#include "vime/core/runtime_info.hpp"
#include "vime/dist/local_launcher.hpp"
#include "vime/error.hpp"
#include "vime/loop/hook_plugin_check.hpp"
#include "vime/loop/train_loop.hpp"
#include "vime/plugin/rollout_plugin.hpp"

namespace vime::app {
namespace {

constexpr const char* kUsage = R"(usage: vime train [flags]

Runs slime's RL loop: rollout with the embedded engine or vLLM, rewards, training, weight updates,
checkpoints and eval. Flags are slime's (and the Megatron flags slime scripts pass); presets from
scripts/models/*.sh work as in slime:  source scripts/models/qwen3-4B.sh; vime train "${MODEL_ARGS[@]}" ...
--vllm-* and --router-* flags that vime does not own are passed verbatim to vLLM / vllm-router.

  --help [GROUP]     all flags, or those of one group (e.g. --help rollout)
)";

}  // namespace

int run_train(const Arguments& argv) {
  if (auto code = help_exit_code(argv, kUsage, core::FlagRegistry::instance())) return *code;
  Args args = core::parse_args(argv);
  plugin::resolve_rollout_plugin(args);
  auto warnings = core::validate_args(args);
  core::ConfigDumpExtras extras;
  extras.plugins = loop::check_hook_plugins(args);
  extras.warnings = warnings;
  for (const auto& w : warnings) std::fprintf(stderr, "vime train: warning: %s\n", w.c_str());
  if (args.get_bool("dry_run")) {
    std::cout << core::resolved_config_yaml(args, extras);
    return 0;
  }
  // `--actor-num-gpus-per-node G` (> 1, given explicitly) outside torchrun/Slurm: this process
  // becomes the launcher of the node's G ranks, each running this same command line.
  std::vector<std::string> command_line{"vime", "train"};
  command_line.insert(command_line.end(), argv.begin(), argv.end());
  const auto runtime = core::runtime_info();
  if (auto plan = dist::local_launch_plan(args, command_line,
                                          runtime.cuda_available ? runtime.cuda_device_count : 0)) {
    return dist::launch_local_ranks(*plan, std::cout);
  }
  // Line-buffered even into a pipe (`vime train ... | tee log`): a run that is killed keeps its
  // last console lines, which say where it was.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  return loop::run_training(args, std::cout);
}

}  // namespace vime::app
