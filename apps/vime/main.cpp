// vime: LLM RL post-training. `vime <command> [flags]`; `vime <command> --help` for each command.
#include <cstdio>
#include <exception>
#include <string>
#include <string_view>

#include "commands.hpp"
#include "vime/core/runtime_info.hpp"
#include "vime/error.hpp"
#include "vime/plugin.hpp"
#include "vime/version.hpp"

namespace {

struct Command {
  const char* name;
  const char* summary;
  int (*run)(const vime::app::Arguments&);
};

constexpr Command kCommands[] = {
    {"train",
     "RL (or SFT) training with slime's flags; --dry-run prints the resolved configuration",
     vime::app::run_train},
    {"eval",
     "evaluate a checkpoint or HF directory on eval datasets (--dataset, --eval-prompt-data, "
     "--eval-config)",
     vime::app::run_eval},
    {"plugin", "inspect a plugin .so, or start a new one (`vime plugin new --kind reward NAME`)",
     vime::app::run_plugin},
    {"tokenize", "encode, decode or render chat templates over JSONL with an HF tokenizer",
     vime::app::run_tokenize},
    {"reward", "grade a JSONL file with a reward model (--rm-type or --custom-rm-path)",
     vime::app::run_reward},
    {"convert-hf", "HF <-> vime checkpoints (--hf-checkpoint/--save, or --input-dir/--output-dir)",
     vime::app::run_convert_hf},
    {"convert", "the same as convert-hf (a short spelling), with the same flags",
     vime::app::run_convert_hf},
    {"logprobs", "score {tokens, response_length} JSONL under a model: log_probs and entropy",
     vime::app::run_logprobs},
    {"serve", "serve a checkpoint behind vLLM's HTTP API (/v1/completions, /inference/v1/generate)",
     vime::app::run_serve},
    {"retrieve", "BM25 search over a JSONL corpus behind Search-R1's /retrieve (`retrieve serve`)",
     vime::app::run_retrieve},
};

void print_usage() {
  std::printf(
      "usage: vime <command> [flags]\n\nLLM reinforcement-learning post-training (slime's design, "
      "natively).\n\n"
      "commands:\n");
  for (const auto& c : kCommands) std::printf("  %-10s %s\n", c.name, c.summary);
  std::printf(
      "\n  vime <command> --help    flags of a command\n  vime --version           versions and "
      "devices\n");
}

void print_version() {
  auto info = vime::core::runtime_info();
  std::printf("vime %s (plugin ABI %u)\nLibTorch %s, CUDA %s, %d GPU(s) visible\n", VIME_VERSION,
              VIME_PLUGIN_ABI, info.torch_version.c_str(),
              info.cuda_available ? "available" : "not available", info.cuda_device_count);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    print_usage();
    return 2;
  }
  const std::string_view first = argv[1];
  if (first == "--help" || first == "-h" || first == "help") {
    print_usage();
    return 0;
  }
  if (first == "--version" || first == "-V" || first == "version") {
    print_version();
    return 0;
  }
  for (const auto& command : kCommands) {
    if (first != command.name) continue;
    vime::app::Arguments args(argv + 2, argv + argc);
    try {
      return command.run(args);
    } catch (const vime::UsageError& e) {
      std::fprintf(stderr, "vime %s: error: %s\n", command.name, e.what());
      return 2;
    } catch (const vime::Error& e) {
      std::fprintf(stderr, "vime %s: error: %s\n", command.name, e.what());
      return 1;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "vime %s: internal error: %s\n", command.name, e.what());
      return 1;
    }
  }
  std::fprintf(stderr, "vime: unknown command '%s' (commands:", argv[1]);
  for (const auto& c : kCommands) std::fprintf(stderr, " %s", c.name);
  std::fprintf(stderr, "; vime --help)\n");
  return 2;
}
