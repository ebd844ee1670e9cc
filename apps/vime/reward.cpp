// vime reward: grade a JSONL file with a reward model, the tool reward-plugin authors use.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "commands.hpp"
#include "vime/core/arg_parser.hpp"
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
  --workers N            grading threads (default: one per core)
)";

std::string take_value(const Arguments& argv, size_t& i) {
  if (i + 1 >= argv.size()) throw UsageError(argv[i] + " needs a value");
  return argv[++i];
}

}  // namespace

int run_reward(const Arguments& argv) {
  reward::RewardFileOptions options;
  std::vector<std::string> rest;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (a == "--input") {
      options.input = take_value(argv, i);
    } else if (a == "--output") {
      options.output = take_value(argv, i);
    } else if (a == "--workers") {
      std::string v = take_value(argv, i);
      try {
        options.workers = std::stoi(v);
      } catch (const std::exception&) {
        throw UsageError("--workers: '" + v + "' is not a number");
      }
      if (options.workers < 1) throw UsageError("--workers must be at least 1");
    } else {
      rest.push_back(a);
    }
  }
  if (options.input.empty())
    throw UsageError("--input IN.jsonl is required (see vime reward --help)");
  if (options.output.empty())
    throw UsageError("--output OUT.jsonl is required (see vime reward --help)");
  Args args = core::parse_args(rest);
  if (args.is_set("rm_type") && !args.is_set("custom_rm_path")) {
    std::string type = args.get_string("rm_type");
    if (type.starts_with("boxed_")) type = type.substr(6);
    const auto& known = reward::builtin_rm_types();
    if (std::find(known.begin(), known.end(), type) == known.end()) {
      std::string list;
      for (const auto& t : known) list += (list.empty() ? "" : ", ") + t;
      throw UsageError("--rm-type " + args.get_string("rm_type") +
                       ": unknown reward model (built-in: " + list +
                       ", optionally prefixed boxed_)");
    }
    if (type == "remote_rm" && !args.is_set("rm_url")) {
      throw UsageError("--rm-type remote_rm needs --rm-url (the reward service's URL)");
    }
  }
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
