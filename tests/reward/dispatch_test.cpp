// Which reward model grades a sample: --rm-type, metadata.rm_type, boxed_, --custom-rm-path (single
// and --group-rm), a sample's own custom_rm_path, --reward-key, and the errors for the rest.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <thread>

#include "reward/reward_test_support.hpp"
#include "support/test_support.hpp"
#include "vime/error.hpp"

using vime::Json;
using vime::Sample;
using vime::reward::RewardDispatcher;
using vime::test::grade;
using vime::test::plugin_path;
using vime::test::reward_args;

namespace {

Sample sample(const std::string& response, const Json& label,
              const Json& metadata = Json::object()) {
  Sample s;
  s.response = response;
  s.label = label;
  s.metadata = metadata;
  return s;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const vime::Error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("metadata rm_type wins over --rm-type", "[rm_dispatch]") {
  vime::Args args = reward_args("f1");
  RewardDispatcher d(args);
  Json meta = Json::object();
  meta["rm_type"] = " math ";  // slime strips it
  CHECK(d.reward(sample("\\boxed{42}", "42", meta)) == Json(1));
  CHECK(d.reward(sample("42", "42")).as_double() == 1.0);  // f1
}

TEST_CASE("boxed_ grades the boxed content", "[rm_dispatch]") {
  CHECK(grade("f1", "so it is \\boxed{brown fox}", "brown fox").as_double() < 1.0);
  CHECK(grade("boxed_f1", "so it is \\boxed{brown fox}", "brown fox").as_double() == 1.0);
  CHECK(grade("boxed_f1", "no box: brown fox", "brown fox").as_double() == 0.0);  // response ""
  CHECK(grade("boxed_gpqa", "A or B? \\boxed{B}", "B").as_double() == 1.0);
}

TEST_CASE("unknown and missing reward types are clear errors", "[rm_dispatch]") {
  CHECK_THAT(error_of([] { grade("nope", "x", "y"); }),
             Catch::Contains("'nope' is not implemented") && Catch::Contains("math"));
  CHECK_THAT(error_of([] { grade("ifbench", "x", "y"); }),
             Catch::Contains("ifbench is not available"));
  vime::Args none;
  RewardDispatcher d(none);
  CHECK_THAT(error_of([&] { d.reward(sample("x", "y")); }), Catch::Contains("no reward model"));

  vime::test::TempDir empty;
  ::setenv("VIME_PLUGIN_DIR", empty.path().c_str(), 1);
  std::string missing = error_of([] { grade("math", "x", "y"); });
  ::unsetenv("VIME_PLUGIN_DIR");
  CHECK_THAT(missing, Catch::Contains("librm_math.so") && Catch::Contains("VIME_PLUGIN_DIR"));
}

TEST_CASE("--custom-rm-path replaces --rm-type; a sample's own path wins", "[rm_dispatch]") {
  vime::Args args = reward_args("math");
  args.set("custom_rm_path", Json(plugin_path("reward_plugins") + ":ends_with_label"),
           vime::ArgSource::kCommandLine, "--custom-rm-path");
  RewardDispatcher d(args);
  CHECK(d.reward(sample("it is 42", "42")) == Json(1));
  CHECK(d.reward(sample("42 it is", "42")) == Json(0));
  Sample own = sample("it is 42", "42");
  own.custom_rm_path = plugin_path("reward_plugins") + ":fail_on_marker";
  CHECK(d.reward(own).as_double() == 0.5);
}

TEST_CASE("--group-rm calls a group_reward plugin once per group", "[rm_dispatch]") {
  vime::Args args;
  args.set("custom_rm_path", Json(plugin_path("reward_plugins") + ":length_rank"),
           vime::ArgSource::kCommandLine, "--custom-rm-path");
  args.set("group_rm", Json(true), vime::ArgSource::kCommandLine, "--group-rm");
  args.set("reward_key", Json("rank"), vime::ArgSource::kCommandLine, "--reward-key");
  RewardDispatcher d(args);
  REQUIRE(d.uses_group_rm());
  std::vector<Sample> group = {sample("aaa", ""), sample("a", ""), sample("aa", "")};
  auto rewards = d.group_reward(group);
  REQUIRE(rewards.size() == 3);
  for (size_t i = 0; i < 3; ++i) {
    group[i].reward = rewards[i];
    CHECK(rewards[i].at("group_size").as_int() == 3);
  }
  CHECK(group[0].get_reward_value(args) == 2.0);
  CHECK(group[1].get_reward_value(args) == 0.0);
  CHECK(group[2].get_reward_value(args) == 1.0);

  // A per-sample reward plugin is the wrong kind under --group-rm.
  args.set("custom_rm_path", Json(plugin_path("reward_plugins") + ":ends_with_label"),
           vime::ArgSource::kCommandLine, "--custom-rm-path");
  CHECK_THAT(error_of([&] { RewardDispatcher bad(args); }), Catch::Contains("group_reward"));
}

TEST_CASE("one dispatcher grades from many threads", "[rm_dispatch]") {
  vime::Args args = reward_args("math");
  RewardDispatcher d(args);
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        int n = t * 1000 + i;
        Json r =
            d.reward(sample("\\boxed{" + std::to_string(n) + "}", std::to_string(n + (i % 2))));
        if (r != Json(i % 2 == 0 ? 1 : 0)) ++wrong;
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(wrong == 0);
}
