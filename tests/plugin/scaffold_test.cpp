// `vime plugin new` output must build out of tree against an installed vime and load.
#include "vime/plugin/scaffold.hpp"

#include <algorithm>
#include <catch2/catch.hpp>

#include "support/test_support.hpp"
#include "vime/core/atomic_file.hpp"
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

// As a user would, `vime plugin new` then a CMake build against `cmake --install` of this build,
// for one plain kind (reward) and one tensor kind (the first that includes LibTorch), each from its
// own generated CMakeLists.txt. The other kinds are compiled, linked and loaded too, but cheaply:
// their sources are included by one translation unit of one plugin (each exports under its own
// name), plain kinds first so none of them sees LibTorch's headers. Any kind that stops compiling,
// exporting or loading fails the test.
TEST_CASE("a scaffolded plugin builds against the installed vime and loads", "[scaffold]") {
  vime::test::TempDir dir;
  const std::string prefix = (dir.path() / "prefix").string();
  auto install =
      run_command("cmake --install " + std::string(VIME_BUILD_DIR) + " --prefix " + prefix);
  INFO(install.output);
  REQUIRE(install.exit_code == 0);

  const std::string vime = prefix + "/bin/vime";
  std::vector<std::string> plain, tensor;
  for (const auto& kind : vime::plugin::scaffold_kinds()) {
    const auto files =
        vime::plugin::write_plugin_scaffold(kind, "my_" + kind, dir.path() / ("all/my_" + kind));
    const bool uses_torch =
        vime::read_text_file(files.at(1)).find("<ATen/ATen.h>") != std::string::npos;
    (uses_torch ? tensor : plain).push_back(kind);
  }
  REQUIRE(std::find(plain.begin(), plain.end(), "reward") != plain.end());
  REQUIRE_FALSE(tensor.empty());
  const std::vector<std::string> full = {"reward", tensor.front()};
  for (const auto& kind : full) {  // the CLI writes what the build below uses
    const std::string src = (dir.path() / ("my_" + kind)).string();
    auto created =
        run_command(vime + " plugin new --kind " + kind + " my_" + kind + " --output " + src);
    INFO(created.output);
    REQUIRE(created.exit_code == 0);
  }
  std::string unity;
  for (const auto* group : {&plain, &tensor}) {
    for (const auto& kind : *group) {
      if (std::find(full.begin(), full.end(), kind) == full.end())
        unity += "#include \"all/my_" + kind + "/my_" + kind + ".cpp\"\n";
    }
  }
  dir.write("all_kinds.cpp", unity);
  dir.write("CMakeLists.txt",
            "cmake_minimum_required(VERSION 3.25)\nproject(all LANGUAGES CXX)\n"
            "add_subdirectory(my_reward)\nadd_subdirectory(my_" +
                tensor.front() +
                ")\n"
                "find_package(vime REQUIRED)\nfind_package(Torch REQUIRED)\n"
                "vime_add_plugin(all_kinds all_kinds.cpp)\n"
                "target_include_directories(all_kinds PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})\n"
                "target_link_libraries(all_kinds PRIVATE stdc++ torch)\n");
  auto configure =
      run_command("cmake -S " + dir.path().string() + " -B " + (dir.path() / "build").string() +
                  " -DCMAKE_PREFIX_PATH=" + prefix + " -DCMAKE_BUILD_TYPE=Release");
  INFO(configure.output);
  REQUIRE(configure.exit_code == 0);
  auto build = run_command("cmake --build " + (dir.path() / "build").string() + " -j2");
  INFO(build.output);
  REQUIRE(build.exit_code == 0);

  for (const auto& kind : full) {
    const std::string so =
        (dir.path() / "build" / ("my_" + kind) / ("libmy_" + kind + ".so")).string();
    auto inspected = run_command(vime + " plugin inspect " + so);
    INFO(inspected.output);
    CHECK(inspected.exit_code == 0);
    CHECK_THAT(inspected.output, Catch::Contains("my_" + kind) && Catch::Contains(kind));
  }
  auto inspected =
      run_command(vime + " plugin inspect " + (dir.path() / "build/liball_kinds.so").string());
  INFO(inspected.output);
  CHECK(inspected.exit_code == 0);
  CHECK_THAT(inspected.output,
             Catch::Contains(std::to_string(plain.size() + tensor.size() - 2) + " export(s)"));
  for (const auto* group : {&plain, &tensor}) {
    for (const auto& kind : *group) {
      if (std::find(full.begin(), full.end(), kind) != full.end()) continue;
      CAPTURE(kind);
      CHECK_THAT(inspected.output, Catch::Contains("my_" + kind + " "));
    }
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
