// `vime plugin new` output must build out of tree against an installed vime and load.
#include "vime/plugin/scaffold.hpp"

#include <algorithm>
#include <catch2/catch.hpp>

#include "support/test_support.hpp"
#include "vime/error.hpp"
#include "vime/plugin.hpp"

using vime::test::run_command;
using vime::test::run_vime;

TEST_CASE("scaffold refuses bad kinds, names and existing files", "[plugin]") {
  vime::test::TempDir dir;
  CHECK_THROWS_WITH(vime::plugin::write_plugin_scaffold("banana", "x", dir.path()),
                    Catch::Contains("--kind banana: `vime plugin new` writes one of: reward"));
  CHECK_THROWS_WITH(vime::plugin::write_plugin_scaffold("reward", "9lives", dir.path()),
                    Catch::Contains("must be a C identifier"));
  vime::plugin::write_plugin_scaffold("reward", "ok", dir.path());
  CHECK_THROWS_WITH(vime::plugin::write_plugin_scaffold("reward", "ok", dir.path()),
                    Catch::Contains("already exists"));
}

TEST_CASE("vime plugin new has a template for every kind of the plugin ABI", "[plugin]") {
  const auto kinds = vime::plugin::scaffold_kinds();
  auto has = [&](vime::PluginKind k) {
    return std::find(kinds.begin(), kinds.end(), vime::plugin_kind_name(k)) != kinds.end();
  };
  for (uint32_t k = 1; k <= static_cast<uint32_t>(vime::PluginKind::kUpdateWeightPostWrite); ++k) {
    CAPTURE(vime::plugin_kind_name(static_cast<vime::PluginKind>(k)));
    CHECK(has(static_cast<vime::PluginKind>(k)));
  }
  for (uint32_t k = 100; k <= static_cast<uint32_t>(vime::PluginKind::kModelProvider); ++k) {
    CAPTURE(vime::plugin_kind_name(static_cast<vime::PluginKind>(k)));
    CHECK(has(static_cast<vime::PluginKind>(k)));
  }
  CHECK(kinds.size() == 24);
}

TEST_CASE("a scaffolded plugin builds against the installed vime and loads", "[scaffold]") {
  vime::test::TempDir dir;
  const std::string prefix = (dir.path() / "prefix").string();
  auto install =
      run_command("cmake --install " + std::string(VIME_BUILD_DIR) + " --prefix " + prefix);
  INFO(install.output);
  REQUIRE(install.exit_code == 0);

  const std::string vime = prefix + "/bin/vime";
  for (const auto& kind : vime::plugin::scaffold_kinds()) {
    const std::string name = "my_" + kind;
    const std::string src = (dir.path() / name).string();
    auto created =
        run_command(vime + " plugin new --kind " + kind + " " + name + " --output " + src);
    INFO(created.output);
    REQUIRE(created.exit_code == 0);
  }
  // One CMake project per kind would cost a configure each; build them all from one parent project.
  std::string parent = "cmake_minimum_required(VERSION 3.25)\nproject(all LANGUAGES CXX)\n";
  for (const auto& kind : vime::plugin::scaffold_kinds())
    parent += "add_subdirectory(my_" + kind + ")\n";
  dir.write("CMakeLists.txt", parent);
  auto configure =
      run_command("cmake -S " + dir.path().string() + " -B " + (dir.path() / "build").string() +
                  " -DCMAKE_PREFIX_PATH=" + prefix + " -DCMAKE_BUILD_TYPE=Release");
  INFO(configure.output);
  REQUIRE(configure.exit_code == 0);
  auto build = run_command("cmake --build " + (dir.path() / "build").string() + " -j2");
  INFO(build.output);
  REQUIRE(build.exit_code == 0);

  for (const auto& kind : vime::plugin::scaffold_kinds()) {
    const std::string so =
        (dir.path() / "build" / ("my_" + kind) / ("libmy_" + kind + ".so")).string();
    auto inspected = run_command(vime + " plugin inspect " + so);
    INFO(inspected.output);
    CHECK(inspected.exit_code == 0);
    CHECK_THAT(inspected.output, Catch::Contains("my_" + kind) && Catch::Contains(kind));
  }
  // The installed vime accepts the scaffolded reward plugin in a run.
  const std::string reward_so = (dir.path() / "build/my_reward/libmy_reward.so").string();
  auto dry = run_command(
      vime + " train --dry-run --rollout-batch-size 2 --num-rollout 1 --custom-rm-path " +
      reward_so);
  INFO(dry.output);
  CHECK(dry.exit_code == 0);
  CHECK_THAT(dry.output, Catch::Contains("--custom-rm-path: " + reward_so + ":my_reward (reward)"));
}
