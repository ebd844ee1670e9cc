#include "vime/plugin/plugin_loader.hpp"

#include <catch2/catch.hpp>

#include "support/test_support.hpp"
#include "vime/core/arg_parser.hpp"
#include "vime/error.hpp"
#include "vime/hooks.hpp"
#include "vime/loop/hook_plugin_check.hpp"
#include "vime/plugin/builtin_plugins.hpp"

using vime::PluginKind;
using vime::plugin::load_plugin;
using vime::test::plugin_path;

namespace {

std::string load_error(const std::string& spec, PluginKind kind = PluginKind::kReward) {
  try {
    vime::plugin::load_export(spec, "--custom-rm-path", kind, "reward");
  } catch (const vime::UsageError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("a reward plugin loads and runs", "[plugin]") {
  auto rm = load_plugin<PluginKind::kReward>(plugin_path("good_plugins") + ":contains_label",
                                             "--custom-rm-path", "reward");
  vime::Args args;
  vime::Sample s;
  s.response = "so the answer is 42";
  s.label = "42";
  CHECK(rm(args, s).as_double() == 1.0);
  s.label = "41";
  CHECK(rm(args, s).as_double() == 0.0);
  CHECK(rm.description() == plugin_path("good_plugins") + ":contains_label");

  // Without ":symbol" the only export of the needed kind is chosen.
  auto filter = load_plugin<PluginKind::kDynamicFilter>(
      plugin_path("good_plugins"), "--dynamic-sampling-filter-path", "dynamic_filter");
  std::vector<vime::Sample> group(2);
  group[0].reward = 1.0;
  group[1].reward = 1.0;
  args.set("reward_key", vime::Json(), vime::ArgSource::kDefault);
  auto out = filter(args, group);
  CHECK_FALSE(out.keep);
  CHECK(out.reason == "zero_std");
}

TEST_CASE("inspect lists every export with its kind", "[plugin]") {
  auto info = vime::plugin::inspect_plugin(plugin_path("good_plugins"));
  CHECK(info.abi == VIME_PLUGIN_ABI);
  REQUIRE(info.exports.size() == 3);
  CHECK(info.exports[0].name == "contains_label");
  CHECK(info.exports[0].kind == PluginKind::kReward);
  CHECK(info.exports[2].name == "keep_nonzero_std");
  CHECK(info.exports[2].kind == PluginKind::kDynamicFilter);
}

TEST_CASE("each plugin failure is one line naming the flag and the file", "[plugin]") {
  vime::test::TempDir dir;
  const std::string good = plugin_path("good_plugins");

  std::string missing = load_error((dir.path() / "nope.so").string());
  CHECK(missing == "--custom-rm-path: " + (dir.path() / "nope.so").string() + " does not exist");

  auto text = dir.write("notes.so", "this is text, not ELF\n");
  CHECK_THAT(load_error(text.string()),
             Catch::StartsWith("--custom-rm-path: " + text.string() + " is not a shared library"));

  auto truncated = dir.write("truncated.so", std::string("\x7f"
                                                         "ELF\x02\x01\x01",
                                                         7));
  CHECK_THAT(load_error(truncated.string()), Catch::Contains("cannot be loaded"));

  CHECK_THAT(load_error(plugin_path("not_vime")), Catch::Contains("is not a vime plugin"));

  CHECK_THAT(load_error(plugin_path("wrong_abi")),
             Catch::Contains("was built for vime plugin ABI 999, but this vime has ABI " +
                             std::to_string(VIME_PLUGIN_ABI) + "; rebuild the plugin"));

  CHECK(load_error(good + ":no_such") ==
        "--custom-rm-path: " + good +
            " has no plugin named 'no_such'; it exports: contains_label (reward), "
            "scored (reward), keep_nonzero_std (dynamic_filter)");

  CHECK(load_error(good + ":keep_nonzero_std") ==
        "--custom-rm-path: " + good +
            ":keep_nonzero_std is a dynamic_filter plugin, but "
            "--custom-rm-path needs a reward plugin");

  CHECK(load_error(good) == "--custom-rm-path: " + good +
                                " exports 2 reward plugins; choose one with " + good +
                                ":contains_label");

  CHECK_THAT(load_error(good, PluginKind::kGenerate),
             Catch::Contains("exports no generate plugin"));

  for (const auto& message :
       {missing, load_error(plugin_path("not_vime")), load_error(good + ":keep_nonzero_std")}) {
    CHECK(message.find('\n') == std::string::npos);
  }
}

TEST_CASE("plugin spec parsing", "[plugin]") {
  auto s = vime::plugin::parse_plugin_spec("/a/b/libx.so:my_fn");
  CHECK(s.path == "/a/b/libx.so");
  CHECK(s.symbol == "my_fn");
  auto plain = vime::plugin::parse_plugin_spec("./libx.so");
  CHECK(plain.path == "./libx.so");
  CHECK(plain.symbol.empty());
}

TEST_CASE("every plugin flag of a run is checked up front", "[plugin]") {
  const std::string good = plugin_path("good_plugins");
  std::vector<std::string> tokens = {"--custom-rm-path", good + ":scored",
                                     "--dynamic-sampling-filter-path", good};
  vime::Args args = vime::core::parse_args(tokens);
  auto lines = vime::loop::check_hook_plugins(args);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0] == "--custom-rm-path: " + good + ":scored (reward)");

  std::vector<std::string> group = {"--custom-rm-path", good + ":scored", "--group-rm"};
  vime::Args group_args = vime::core::parse_args(group);
  CHECK_THROWS_WITH(vime::loop::check_hook_plugins(group_args),
                    Catch::Contains("needs a group_reward plugin"));

  std::vector<std::string> python = {"--custom-rm-path",
                                     "examples.search_r1.generate_with_search.reward_func"};
  vime::Args python_args = vime::core::parse_args(python);
  CHECK_THROWS_WITH(vime::loop::check_hook_plugins(python_args),
                    Catch::Contains("is a Python function path"));
}

TEST_CASE("built-in plugins are looked up beside libvime", "[plugin]") {
  CHECK(vime::plugin::builtin_plugin_dir() ==
        std::filesystem::path(VIME_BUILD_DIR) / "lib" / "vime");
  CHECK(vime::plugin::builtin_plugin_path("rm_math").filename() == "librm_math.so");
}
