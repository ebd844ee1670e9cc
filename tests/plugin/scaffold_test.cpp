// `vime plugin new` output must build out of tree against an installed vime and load.
#include "vime/plugin/scaffold.hpp"

#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <map>
#include <sstream>
#include <thread>

#include "support/test_support.hpp"
#include "vime/core/atomic_file.hpp"
#include "vime/error.hpp"
#include "vime/json.hpp"
#include "vime/plugin.hpp"

using vime::test::run_command;
using vime::test::run_vime;

namespace {

// The code service the out-of-tree plugin calls: answers {"code": ...} for a response, Python that
// prints len(response) * 10, plus 1 if it can reach this server (it must not: the sandbox has no
// network).
class CodeService {
 public:
  CodeService() {
    server_.Post("/code", [this](const httplib::Request& req, httplib::Response& res) {
      ++calls_;
      const std::string response =
          vime::Json::parse(req.body, "the plugin's request").at("response").as_string();
      vime::Json answer = vime::Json::object();
      answer["code"] = "import socket\ntry:\n    socket.create_connection(('127.0.0.1', " +
                       std::to_string(port_) +
                       "), timeout=2)\n    reached = 1\nexcept OSError:\n    reached = 0\n"
                       "print(len(" +
                       vime::Json(response).dump() + ") * 10 + reached)\n";
      res.set_content(answer.dump(), "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ~CodeService() {
    server_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/code"; }
  int calls() const { return calls_; }

 private:
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<int> calls_{0};
};

}  // namespace

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
// exporting or loading fails the test. The same build compiles a plugin that calls an HTTP service
// and runs the code it answers in the code sandbox (tests/plugin/out_of_tree), which `vime reward`
// then runs against a real server on 127.0.0.1.
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
  dir.write("code_service_reward/code_service_reward.cpp",
            vime::read_text_file(std::string(VIME_SOURCE_DIR) +
                                 "/tests/plugin/out_of_tree/code_service_reward.cpp"));
  dir.write("code_service_reward/CMakeLists.txt",
            "cmake_minimum_required(VERSION 3.25)\nproject(code_service_reward LANGUAGES CXX)\n"
            "find_package(vime REQUIRED)\n"
            "vime_add_plugin(code_service_reward code_service_reward.cpp)\n");
  dir.write("CMakeLists.txt",
            "cmake_minimum_required(VERSION 3.25)\nproject(all LANGUAGES CXX)\n"
            "add_subdirectory(code_service_reward)\n"
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

  // The installed `vime reward` runs the out-of-tree HTTP + sandbox plugin.
  CodeService service;
  dir.write("graded.jsonl",
            "{\"response\": \"abcd\", \"label\": \"x\"}\n"
            "{\"response\": \"abcdefg\", \"label\": \"x\"}\n");
  const std::string code_so =
      (dir.path() / "build/code_service_reward/libcode_service_reward.so").string();
  auto graded = run_command(vime + " reward --custom-rm-path " + code_so + " --rm-url " +
                            service.url() + " --input " + (dir.path() / "graded.jsonl").string() +
                            " --output " + (dir.path() / "rewards.jsonl").string());
  INFO(graded.output);
  REQUIRE(graded.exit_code == 0);
  CHECK(service.calls() == 2);
  std::map<std::string, vime::Json> rewards;
  std::istringstream lines(vime::read_text_file(dir.path() / "rewards.jsonl"));
  for (std::string line; std::getline(lines, line);) {
    const vime::Json graded_line = vime::Json::parse(line, "rewards.jsonl");
    rewards[graded_line.at("response").as_string()] = graded_line.at("reward");
  }
  CHECK(rewards["abcd"] == vime::Json(40));  // 40 + 0: the sandboxed code did not reach the server
  CHECK(rewards["abcdefg"] == vime::Json(70));
}
