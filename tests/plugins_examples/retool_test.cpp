// plugins/retool (build/plugins/retool.so): its text against goldens written by slime's own
// generate_with_retool.py and tool_sandbox.py (tests/data/retool/make_goldens.py: the prompt, the
// action parser, the interpreter text of real runs, the reward), and its generate loop driven by a
// scripted engine, code running in the real sandbox.
#include <catch2/catch.hpp>
#include <deque>
#include <fstream>
#include <sstream>

#include "arith_tokenizer.hpp"
#include "code_interpreter.hpp"
#include "retool_config.hpp"
#include "retool_text.hpp"
#include "support/reply_queue_engine.hpp"
#include "support/test_support.hpp"
#include "vime/core/arg_parser.hpp"
#include "vime/hooks.hpp"
#include "vime/plugin/plugin_loader.hpp"
#include "vime/tokenizer/hf_tokenizer.hpp"

namespace {

const std::string kPlugin = std::string(VIME_EXAMPLE_PLUGIN_DIR) + "/retool.so";

const vime::Json& goldens() {
  static const vime::Json g = [] {
    std::ifstream in(std::string(VIME_SOURCE_DIR) + "/tests/data/retool/retool_goldens.json");
    std::stringstream text;
    text << in.rdbuf();
    return vime::Json::parse(text.str());
  }();
  return g;
}

vime::Args config_args(const std::string& yaml, std::vector<std::string> flags = {}) {
  auto* dir = new vime::test::TempDir();  // lives for the test binary's run
  auto path = dir->write("retool.yaml", yaml);
  flags.insert(flags.end(), {"--custom-config-path", path.string()});
  return vime::core::parse_args(flags);
}

using ScriptedEngine = vime::test::ReplyQueueEngine;

struct Fixture {
  std::unique_ptr<vime::tokenizer::HfTokenizer> tok;
  vime::plugin::PluginFunction<vime::PluginKind::kGenerate> generate;
  vime::plugin::PluginFunction<vime::PluginKind::kReward> reward;
  Fixture() {
    auto files = vime::quickstart::make_arith_tokenizer();
    tok =
        vime::tokenizer::HfTokenizer::from_json(files.tokenizer_json, files.tokenizer_config_json);
    generate = vime::plugin::load_plugin<vime::PluginKind::kGenerate>(
        kPlugin, "--custom-generate-function-path", "generate");
    reward =
        vime::plugin::load_plugin<vime::PluginKind::kReward>(kPlugin, "--custom-rm-path", "reward");
  }
  vime::Sample run(ScriptedEngine& engine, const vime::Args& args, int64_t max_new_tokens = 64) {
    vime::GenerateContext ctx{args, engine, *tok, false, std::nullopt};
    vime::Sample s;
    s.prompt = "What is 6*7?";
    s.label = "42";
    vime::SamplingParams params;
    params.max_new_tokens = max_new_tokens;
    return generate(ctx, s, params);
  }
};

std::string interpreter(const std::string& text) {
  return "\n\n<interpreter>\n" + text + "\n</interpreter>\n\n";
}

// The golden's Python minor version matches the sandbox's: tracebacks are then byte-equal.
bool same_python_as_goldens() {
  auto r = vime::test::run_command("/usr/bin/python3 -c 'import sys; print(sys.version)'");
  const std::string golden = goldens().at("python").as_string();
  const std::string minor = golden.substr(0, golden.rfind('.') + 1);
  return r.output.rfind(minor, 0) == 0;
}

}  // namespace

TEST_CASE("retool's prompt and action parser are slime's, byte for byte", "[retool]") {
  for (const auto& row : goldens().at("prompts").as_array()) {
    CHECK(retool::format_prompt(row.at("user").as_string()) == row.at("text").as_string());
  }
  int n = 0;
  for (const auto& row : goldens().at("predictions").as_array()) {
    INFO(row.dump());
    const auto action = retool::postprocess_predictions(row.at("text").as_string());
    const vime::Json& want = row.at("action");
    const char* kind = action.kind == retool::Action::kAnswer ? "answer"
                       : action.kind == retool::Action::kCode ? "code"
                                                              : nullptr;
    CHECK(want.is_null() == (kind == nullptr));
    if (kind) CHECK(want.as_string() == kind);
    CHECK(action.content == row.at("content").as_string());
    ++n;
  }
  CHECK(n == 29);
}

TEST_CASE("retool's interpreter text is slime's for real runs in the sandbox", "[retool]") {
  const auto config = retool::RetoolConfig::from(config_args("python_timeout: 20\n"));
  const bool tracebacks = same_python_as_goldens();
  int n = 0;
  for (const auto& row : goldens().at("observations").as_array()) {
    const std::string want = row.at("observation").as_string();
    if (!tracebacks && want.find("  File \"") != std::string::npos) continue;
    INFO(row.dump());
    const auto obs = retool::execute_prediction(config, row.at("text").as_string());
    CHECK(obs.text == want);
    CHECK(obs.done == row.at("done").as_bool());
    ++n;
  }
  CHECK(n >= (tracebacks ? 24 : 22));
}

TEST_CASE("retool's reward is slime's reward_func (dapo strict box + tool-call bonus)",
          "[retool]") {
  Fixture f;
  int n = 0;
  for (const auto& row : goldens().at("rewards").as_array()) {
    INFO(row.dump());
    vime::Sample s;
    s.prompt = "PROMPT ";
    s.response = row.at("response").as_string();
    s.label = row.at("label");
    if (!row.at("tool_call_count").is_null()) {
      s.metadata["retool"] = vime::Json::Object{{"tool_call_count", row.at("tool_call_count")}};
    }
    const vime::Json got = f.reward(config_args("{}"), s);
    const vime::Json& want = row.at("result");
    CHECK(got.at("score").as_double() == want.at("score").as_double());  // exactly: same IEEE ops
    CHECK(got.at("acc").as_bool() == want.at("acc").as_bool());
    CHECK(got.at("pred").as_string() == want.at("pred").as_string());
    ++n;
  }
  CHECK(n == 23);
}

TEST_CASE("retool: code runs, the interpreter block is masked out, then the answer", "[retool]") {
  Fixture f;
  auto args = config_args("python_timeout: 20\n");
  const std::string t1 = "Let me compute.\n<code>\nprint(6*7)\n</code>";
  const std::string t2 = "So Answer: \\boxed{42}";
  ScriptedEngine engine(*f.tok, {{t1}, {t2}});
  auto s = f.run(engine, args);
  const std::string obs = interpreter("Output:\n42");
  CHECK(s.response == t1 + obs + t2);
  const auto n1 = f.tok->encode(t1).size(), n_obs = f.tok->encode(obs).size(),
             n2 = f.tok->encode(t2).size();
  std::vector<int32_t> mask(n1, 1);
  mask.insert(mask.end(), n_obs, 0);
  mask.insert(mask.end(), n2, 1);
  CHECK(*s.loss_mask == mask);
  REQUIRE(s.rollout_log_probs->size() == mask.size());
  for (size_t i = 0; i < mask.size(); ++i) {
    if (mask[i] == 0) CHECK((*s.rollout_log_probs)[i] == 0.0f);
    if (mask[i] == 1) CHECK((*s.rollout_log_probs)[i] < 0.0f);
  }
  CHECK(s.status == vime::SampleStatus::kCompleted);
  CHECK(s.prompt == "What is 6*7?");
  const auto& stats = s.metadata.at("retool");
  CHECK(stats.at("tool_call_count").as_int() == 1);
  CHECK(stats.at("code_runs").as_int() == 1);
  CHECK(stats.at("turns").as_int() == 2);
  // The engine saw slime's tool prompt, then that plus the first turn and the observation.
  REQUIRE(engine.requests.size() == 2);
  const auto prompt_ids = f.tok->encode(retool::format_prompt("What is 6*7?"));
  CHECK(engine.requests[0].input_ids == prompt_ids);
  CHECK(engine.requests[0].sampling_params.stop.empty());  // slime adds no stop strings
  CHECK(engine.requests[1].input_ids.size() == prompt_ids.size() + n1 + n_obs);
  const vime::Json r = f.reward(args, s);
  CHECK(r.at("score").as_double() == 1.0);
  CHECK(r.at("pred").as_string() == "42");
}

TEST_CASE("retool: limits, invalid actions, hostile code, the context budget", "[retool]") {
  Fixture f;
  SECTION("max_tool_calls ends the sample after that many code runs") {
    ScriptedEngine engine(*f.tok, {{"<code>print(1)</code>"}, {"<code>print(2)</code>"}});
    auto s = f.run(engine, config_args("max_tool_calls: 2\n"));
    CHECK(engine.requests.size() == 2);
    CHECK(s.response == "<code>print(1)</code>" + interpreter("Output:\n1") +
                            "<code>print(2)</code>" + interpreter("Output:\n2"));
    CHECK(s.loss_mask->back() == 0);
    // Two tool calls, a wrong (missing) answer: -1 + (2 - 2) / 2 * 0.1 = -1.0.
    CHECK(f.reward(config_args("{}"), s).at("score").as_double() == -1.0);
  }
  SECTION("no action: slime's retry text; max_turns ends it") {
    ScriptedEngine engine(*f.tok, {{"hmm"}, {"still"}});
    auto s = f.run(engine, config_args("max_turns: 2\n"));
    CHECK(s.response ==
          "hmm" + std::string(retool::kInvalidAction) + "still" + retool::kInvalidAction);
    CHECK(s.metadata.at("retool").at("invalid_actions").as_int() == 2);
    CHECK(s.metadata.at("retool").at("tool_call_count").as_int() == 0);
  }
  SECTION("a length finish ends the sample, truncated; an abort, aborted") {
    ScriptedEngine engine(*f.tok, {{"<code>print(1)", "length"}});
    auto s = f.run(engine, config_args("{}"));
    CHECK(s.status == vime::SampleStatus::kTruncated);
    CHECK(s.response == "<code>print(1)");
    ScriptedEngine aborting(*f.tok, {{"", "abort"}});
    CHECK(f.run(aborting, config_args("{}")).status == vime::SampleStatus::kAborted);
  }
  SECTION("hostile code with the safety check off: contained, and said so") {
    ScriptedEngine engine(*f.tok, {{"<code>while True:\n    pass</code>"},
                                   {"<code>import os\nwhile True:\n    os.fork()</code>"},
                                   {"<code>open('/etc/passwd')</code>"},
                                   {"Answer: \\boxed{41}"}});
    auto s = f.run(engine, config_args("python_safety_check: false\npython_timeout: 20\n"
                                       "python_cpu_seconds: 1\npython_max_processes: 8\n"));
    // SIGKILL at RLIMIT_CPU's hard limit, a second past python_cpu_seconds (the run is pid 1 of its
    // pid namespace, which ignores SIGXCPU); on a machine too loaded to give it that, the timeout.
    CHECK_THAT(
        s.response,
        Catch::Contains(interpreter("Error: Process exited with code -9\n")) ||
            Catch::Contains(interpreter("Error: Code execution timed out after 20 seconds")));
    CHECK_THAT(s.response, Catch::Contains("[Errno 11] Resource temporarily unavailable"));
    CHECK_THAT(s.response, Catch::Contains("No such file or directory: '/etc/passwd'"));
    CHECK(s.metadata.at("retool").at("tool_call_count").as_int() == 3);
    // Wrong answer, three tool calls: min(-0.6, -1 + 0.05).
    CHECK(f.reward(config_args("{}"), s).at("score").as_double() == -0.95);
  }
  SECTION("a run past python_timeout: slime's timeout text") {
    ScriptedEngine engine(*f.tok, {{"<code>while True:\n    pass</code>"}});
    auto s =
        f.run(engine, config_args("max_turns: 1\npython_timeout: 1\npython_cpu_seconds: 60\n"));
    CHECK(s.response == "<code>while True:\n    pass</code>" +
                            interpreter("Error: Code execution timed out after 1 seconds"));
    CHECK(s.metadata.at("retool").at("code_timeouts").as_int() == 1);
  }
  SECTION("an observation past --rollout-max-context-len is cut, and the sample truncated") {
    const auto prompt_len =
        static_cast<int64_t>(f.tok->encode(retool::format_prompt("What is 6*7?")).size());
    const std::string t1 = "<code>print('y' * 500)</code>";
    const auto n1 = static_cast<int64_t>(f.tok->encode(t1).size());
    ScriptedEngine engine(*f.tok, {{t1}});
    vime::Args args =
        config_args("{}", {"--rollout-max-context-len", std::to_string(prompt_len + n1 + 10)});
    auto s = f.run(engine, args, 1000);
    CHECK(engine.requests[0].sampling_params.max_new_tokens == n1 + 10);  // clamped to the budget
    CHECK(s.status == vime::SampleStatus::kTruncated);
    CHECK(static_cast<int64_t>(s.tokens.size()) == prompt_len + n1 + 10);
    CHECK(s.response_length == n1 + 10);
    CHECK(s.response ==
          f.tok->decode(std::vector<int32_t>(s.tokens.begin() + prompt_len, s.tokens.end())));
  }
  SECTION("bad settings are usage errors naming the key") {
    ScriptedEngine engine(*f.tok, {});
    CHECK_THROWS_WITH(f.run(engine, config_args("max_turns: 0\n")), Catch::Contains("max_turns"));
    CHECK_THROWS_WITH(f.run(engine, config_args("python_memory_limit: lots\n")),
                      Catch::Contains("python_memory_limit"));
    CHECK(retool::parse_byte_size("k", vime::Json("4GB")) == int64_t{4} << 30);
    CHECK(retool::parse_byte_size("k", vime::Json("512MB")) == int64_t{512} << 20);
  }
}

TEST_CASE("retool: interpreter output beyond the cap ends in a note; bad UTF-8 is replaced",
          "[retool]") {
  const auto config = retool::RetoolConfig::from(config_args("python_max_output_bytes: 101\n"));
  const auto run = retool::execute_code(config, "print('\\u00e9' * 200)");
  // "Output:\n", 46 two-byte characters and half the 47th are kept; the half is replaced.
  CHECK(run.text == "Output:\n" + [] {
    std::string s;
    for (int i = 0; i < 46; ++i) s += "\u00e9";
    return s;
  }() + "\xEF\xBF\xBD\n[output truncated: the first 101 of 410 bytes]");
  CHECK(retool::valid_utf8("a\xFF\xC3\xA9") == "a\xEF\xBF\xBD\xC3\xA9");
  CHECK(retool::python_strip("\u3000\u00a0 x y\t\u2029") == "x y");  // str.strip()
  CHECK(retool::python_strip("\u200b x") == "\u200b x");             // zero-width space is no space
}
