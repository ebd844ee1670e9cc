// The parser's pieces the subcommands need: positionals, required flags, one-dash spellings, and a
// subcommand's own flags on top of train's (replacing train's flag of the same name).
#include "vime/core/flags/command_flags.hpp"

#include <catch2/catch.hpp>

#include "vime/core/arg_parser.hpp"
#include "vime/core/flag_registry.hpp"
#include "vime/core/help.hpp"
#include "vime/error.hpp"

using vime::Args;
using vime::UsageError;
using namespace vime::core;

namespace {

using enum FlagKind;
constexpr FlagSpec kToy[] = {
    {.name = "MODE",
     .kind = kString,
     .default_value = nullptr,
     .help = "what to do",
     .choices = "run|walk",
     .required = true},
    {"FILE", kString, nullptr, "an optional file"},
    {.name = "--input", .kind = kString, .default_value = nullptr, .help = "in", .required = true},
    {"--output", kString, nullptr, "out"},
    {"--force", kStoreTrue, nullptr, "overwrite", Support::kYes, {}, {}, "-f"},
    {"--seed", kInt, nullptr, "the toy's own seed", Support::kYes, {}, "toy_seed"},
};

const FlagRegistry& toy() {
  static const FlagRegistry registry("toy", {{"toy", "Toy", kToy}});
  return registry;
}

std::string error_of(std::vector<std::string> tokens, const FlagRegistry& registry = toy()) {
  try {
    parse_args(tokens, registry);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("positionals are filled by bare tokens in table order, anywhere", "[args]") {
  Args a = parse_args(std::vector<std::string>{"--input", "in", "run", "-f", "data.txt"}, toy());
  CHECK(a.get_string("mode") == "run");
  CHECK(a.get_string("file") == "data.txt");
  CHECK(a.get_bool("force"));
  CHECK(a.flag_name("mode") == "MODE");
  CHECK_THAT(error_of({"fly", "--input", "x"}), Catch::Contains("MODE: 'fly' is not one of run"));
  CHECK_THAT(error_of({"run", "a", "b", "--input", "x"}),
             Catch::StartsWith("unexpected argument 'b'"));
}

TEST_CASE("required flags and positionals left out are named in one error", "[args]") {
  CHECK(error_of({"run"}) == "--input is required (vime toy --help)");
  CHECK(error_of({}) == "MODE and --input are required (vime toy --help)");
  CHECK(error_of({"run", "--input"}) == "--input expects a value");
}

TEST_CASE("unknown flags name the command's --help and the nearest flag", "[args]") {
  CHECK(error_of({"run", "--inptu", "x"}) ==
        "unknown flag --inptu; did you mean --input? (vime toy --help lists every flag)");
  CHECK_THAT(error_of({"run", "-x"}), Catch::StartsWith("unknown flag -x"));
  // --vllm-* pass through only where the command has vLLM's flags.
  CHECK_THAT(error_of({"run", "--input", "x", "--vllm-foo", "1"}),
             Catch::StartsWith("unknown flag --vllm-foo"));
}

TEST_CASE("a subcommand's flag replaces train's flag of the same name", "[args]") {
  const FlagRegistry layered("toy", {{"toy", "Toy", kToy}}, FlagRegistry::instance());
  CHECK(layered.find("--seed")->dest == "toy_seed");
  CHECK(layered.find("--rollout-temperature") != nullptr);
  Args a = parse_args(std::vector<std::string>{"walk", "--input", "i", "--seed", "7",
                                               "--rollout-temperature", "0.5", "--vllm-foo", "1"},
                      layered);
  CHECK(a.get_int("toy_seed") == 7);
  CHECK(a.get_double("rollout_temperature") == 0.5);
  CHECK(a.vllm_passthrough().size() == 1);
  const std::string help = flags_help({}, layered);
  CHECK_THAT(help,
             Catch::Contains("the toy's own seed") && !Catch::Contains("Seed for weight init"));
  CHECK_THAT(help, Catch::Contains("  MODE {run,walk}") && Catch::Contains("in (required)") &&
                       Catch::Contains("--force (alias -f)"));
}

TEST_CASE("--help anywhere asks for the usage and the flags (of one group)", "[args]") {
  const std::vector<std::string> none = {"run"}, all = {"run", "--help"}, one = {"-h", "rollout"};
  CHECK_FALSE(help_if_asked(none, "usage\n", toy()).has_value());
  CHECK_THAT(*help_if_asked(all, "usage\n", toy()),
             Catch::StartsWith("usage\n") && Catch::Contains("--output STR"));
  const auto rollout = *help_if_asked(one, "usage\n", FlagRegistry::instance());
  CHECK_THAT(rollout, Catch::Contains("--rollout-temperature") && !Catch::Contains("--num-layers"));
}

TEST_CASE("every subcommand's flag rows are well formed", "[flags]") {
  for (const FlagRegistry* registry : flags::command_registries()) {  // throws on duplicates
    for (const auto& group : registry->groups()) {
      for (const auto& spec : group.flags) {
        INFO(registry->command() << ": " << spec.name);
        CHECK_FALSE(spec.help.empty());
        CHECK_NOTHROW(default_value(spec));
        CHECK_FALSE(dest_of(spec).empty());
        if (is_positional(spec)) CHECK(spec.kind == FlagKind::kString);
      }
    }
  }
}
