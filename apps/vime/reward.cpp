// vime reward: grade a JSONL file with a reward model, the tool reward-plugin authors use.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "commands.hpp"
#include "vime/core/arg_parser.hpp"
#include "vime/core/flags/command_flags.hpp"
#include "vime/error.hpp"
#include "vime/reward/reward_dispatch.hpp"
#include "vime/reward/reward_file.hpp"

namespace vime::app {
namespace {

constexpr const char* kUsage =
    R"(usage: vime reward (--rm-type TYPE | --custom-rm-path LIB.so[:sym]) [--reward-key K]
                   --input IN.jsonl --output OUT.jsonl [--workers N] [other slime flags]

Grades every line of IN.jsonl, an object with "response" (a string), "label" (any JSON) and optional
"prompt" and "metadata", and writes it to OUT.jsonl with "reward" added: a number, or the object the
reward model returns (with --reward-key K also "reward_value", the number training would use).
Bad lines are reported by line number and left out; the rest is still graded. Exit code 0 when every
line was graded, 1 when some were not, 2 on a usage error.

  --rm-type TYPE         math, deepscaler, dapo, f1, gpqa, random, remote_rm (needs --rm-url), each
                         optionally prefixed boxed_; a line's metadata.rm_type wins
  --custom-rm-path SPEC  your reward plugin (vime plugin new --kind reward NAME); with --group-rm a
                         group_reward plugin, called once per run of lines sharing "group_index"
  --help [GROUP]         all flags, or those of one group (e.g. --help reward)
)";

// The flags of core::flags::reward_command(), checked, and the reward model's: a built-in
// --rm-type must exist (remote_rm with its --rm-url).
reward::RewardFileOptions reward_file_options(const Args& args) {
  reward::RewardFileOptions options;
  options.input = args.get_string("input");
  options.output = args.get_string("output");
  if (auto workers = args.get_optional_int("workers")) {
    if (*workers < 1) throw UsageError("--workers must be at least 1");
    options.workers = static_cast<int>(*workers);
  }
  if (args.is_set("rm_type") && !args.is_set("custom_rm_path")) {
    const std::string given = args.get_string("rm_type");
    const std::string type = given.starts_with("boxed_") ? given.substr(6) : given;
    const auto& known = reward::builtin_rm_types();
    if (std::find(known.begin(), known.end(), type) == known.end()) {
      std::string list;
      for (const auto& t : known) list += (list.empty() ? "" : ", ") + t;
      throw UsageError("--rm-type " + given + ": unknown reward model (built-in: " + list +
                       ", optionally prefixed boxed_)");
    }
    if (type == "remote_rm" && !args.is_set("rm_url")) {
      throw UsageError("--rm-type remote_rm needs --rm-url (the reward service's URL)");
    }
  }
  return options;
}

}  // namespace

int run_reward(const Arguments& argv) {
  const auto& flags = core::flags::reward_flags();
  if (auto code = help_exit_code(argv, kUsage, flags)) return *code;
  const Args args = core::flags::parse_with_train_defaults(argv, flags);
  const auto options = reward_file_options(args);
  auto report = reward::grade_file(args, options);
  for (size_t k = 0; k < report.bad.size() && k < 20; ++k) {
    std::fprintf(stderr, "vime reward: line %lld skipped: %s\n",
                 static_cast<long long>(report.bad[k].line), report.bad[k].reason.c_str());
  }
  if (report.bad.size() > 20) {
    std::fprintf(stderr, "vime reward: ... and %zu more bad lines\n", report.bad.size() - 20);
  }
  double rate = report.seconds > 0 ? static_cast<double>(report.graded) / report.seconds : 0.0;
  std::fprintf(stderr,
               "vime reward: %lld graded, %zu skipped -> %s (mean reward %.4f, %.3f s, %.0f "
               "samples/s)\n",
               static_cast<long long>(report.graded), report.bad.size(), options.output.c_str(),
               report.numeric ? report.reward_sum / static_cast<double>(report.numeric) : 0.0,
               report.seconds, rate);
  return report.bad.empty() ? 0 : 1;
}

}  // namespace vime::app
