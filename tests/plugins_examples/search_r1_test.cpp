// plugins/search_r1 (build/plugins/search_r1.so) through vime's plugin loader: its reward against
// goldens computed by slime's own qa_em_format.py, its generate loop driven by a scripted engine
// against a real retrieval server on 127.0.0.1 and against the in-process index, and
// --rollout-plugin resolving the .so's kinds.
#include <catch2/catch.hpp>
#include <deque>
#include <fstream>

#include "arith_tokenizer.hpp"
#include "support/reply_queue_engine.hpp"
#include "support/test_support.hpp"
#include "vime/core/arg_parser.hpp"
#include "vime/hooks.hpp"
#include "vime/plugin/plugin_loader.hpp"
#include "vime/plugin/rollout_plugin.hpp"
#include "vime/retrieval/retrieval_server.hpp"
#include "vime/tokenizer/hf_tokenizer.hpp"

namespace {

vime::Args parse_flags(const std::vector<std::string>& flags) {
  return vime::core::parse_args(flags);
}

const std::string kPlugin = std::string(VIME_EXAMPLE_PLUGIN_DIR) + "/search_r1.so";

// Replies in order, each tagged weight version "1".
struct ScriptedEngine : vime::test::ReplyQueueEngine {
  ScriptedEngine(const vime::Tokenizer& tok, std::vector<Reply> replies)
      : ReplyQueueEngine(tok, std::move(replies)) {
    weight_version = "1";
  }
};

const std::vector<vime::retrieval::Document>& corpus() {
  static const std::vector<vime::retrieval::Document> docs = {
      {"0", "\"Zorvath Quellin\"\nZorvath Quellin was born in Mirelund."},
      {"1", "\"Mirelund\"\nMirelund is a harbour city."},
      {"2", "\"Osterhaven\"\nOsterhaven is a mountain town."}};
  return docs;
}

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
  vime::Sample run(ScriptedEngine& engine, const vime::Args& args) {
    vime::GenerateContext ctx{args, engine, *tok, false, std::nullopt};
    vime::Sample s;
    s.prompt =
        "<|im_start|>user\nFor example, <answer> Beijing </answer>. Question: Where was Zorvath "
        "Quellin born?<|im_end|>\n<|im_start|>assistant\n";
    s.label = vime::Json::parse(R"({"ground_truth": {"target": ["Mirelund"]}})");
    vime::SamplingParams params;
    params.max_new_tokens = 64;
    params.stop = {"</search>"};  // already there: not added twice
    return generate(ctx, s, params);
  }
};

vime::Args config_args(const std::string& yaml) {
  vime::test::TempDir* dir = new vime::test::TempDir();  // lives for the test binary's run
  auto path = dir->write("search.yaml", yaml);
  return parse_flags({"--custom-config-path", path.string()});
}

std::string info_block(const std::string& passages) {
  return "\n\n<information>" + passages + "</information>\n\n";
}

}  // namespace

TEST_CASE("the search_r1 reward is slime's compute_score_em on its goldens", "[search_r1]") {
  Fixture f;
  std::ifstream in(std::string(VIME_SOURCE_DIR) + "/tests/data/search_r1/em_goldens.jsonl");
  std::string line;
  int rows = 0;
  while (std::getline(in, line)) {
    auto row = vime::Json::parse(line);
    std::string yaml = "{}";
    if (row.at("kwargs").size() > 0) yaml = row.at("kwargs").dump();
    auto args = config_args(yaml);
    vime::Sample s;
    s.prompt = "";
    s.response = row.at("solution").as_string();
    vime::Json label = vime::Json::object();
    label["ground_truth"] = vime::Json::Object{{"target", row.at("target")}};
    s.label = label;
    INFO(line);
    const vime::Json got = f.reward(args, s);
    const vime::Json& want = row.at("score");
    CHECK(got.is_int() == want.is_int());  // 0 stays an int, 1.0 a float, as in Python
    CHECK(got.as_double() == Approx(want.as_double()).margin(1e-12));
    ++rows;
  }
  CHECK(rows == 42);
  // A label not in slime's form is an error naming the form.
  vime::Sample bad;
  bad.label = "Mirelund";
  CHECK_THROWS_WITH(f.reward(config_args("{}"), bad), Catch::Contains("ground_truth"));
}

TEST_CASE("search_r1: search, information masked out, then the answer", "[search_r1]") {
  Fixture f;
  vime::retrieval::Bm25Index index(corpus());
  vime::retrieval::RetrievalServerOptions options;
  options.port = 0;
  vime::retrieval::RetrievalServer server(index, options);
  server.start();
  auto args = config_args("search_url: " + server.url() + "/retrieve\ntopk: 2\n");
  const std::string t1 =
      "<think>I need to search</think><search> Zorvath Quellin born Mirelund </search>";
  const std::string t2 = "<think>found it</think><answer>Mirelund</answer>";
  ScriptedEngine engine(*f.tok, {{t1}, {t2}});
  auto s = f.run(engine, args);

  const std::string passages =
      "Doc 1(Title: \"Zorvath Quellin\") Zorvath Quellin was born in Mirelund.\n"
      "Doc 2(Title: \"Mirelund\") Mirelund is a harbour city.";
  const std::string obs = info_block(passages);
  CHECK(s.response == t1 + obs + t2);
  CHECK(server.queries_served() == 1);
  const auto n1 = f.tok->encode(t1).size(), n_obs = f.tok->encode(obs).size(),
             n2 = f.tok->encode(t2).size();
  std::vector<int32_t> mask(n1, 1);
  mask.insert(mask.end(), n_obs, 0);
  mask.insert(mask.end(), n2, 1);
  CHECK(*s.loss_mask == mask);
  REQUIRE(s.rollout_log_probs->size() == mask.size());
  for (size_t i = 0; i < mask.size(); ++i) {
    if (mask[i] == 0) CHECK((*s.rollout_log_probs)[i] == 0.0f);
  }
  CHECK(s.response_length == static_cast<int64_t>(mask.size()));
  CHECK(s.status == vime::SampleStatus::kCompleted);
  CHECK(s.metadata.at("search_r1").at("search_calls").as_int() == 1);
  CHECK(s.metadata.at("search_r1").at("turns").as_int() == 2);
  // Stop strings: </search> not added twice, </answer> added; the 2nd turn continues the tokens.
  REQUIRE(engine.requests.size() == 2);
  CHECK(engine.requests[0].sampling_params.stop ==
        std::vector<std::string>{"</search>", "</answer>"});
  CHECK(engine.requests[1].input_ids.size() == s.tokens.size() - n2);
  // The reward sees the prompt and the whole response: valid format, EM 1.0.
  CHECK(f.reward(args, s).as_double() == 1.0);
  // slime's quirk, kept: a single <answer> (no example in the prompt) is no answer at all.
  s.prompt = "<|im_start|>assistant\n";
  CHECK(f.reward(args, s) == vime::Json(0));
}

TEST_CASE("search_r1: invalid actions, max_turns, length and abort", "[search_r1]") {
  Fixture f;
  const std::string invalid =
      "\nMy previous action is invalid. If I want to search, I should put the query between "
      "<search> and </search>. If I want to give the final answer, I should put the answer "
      "between <answer> and </answer>. Let me try again.\n";
  SECTION("no action: the retry text, masked; max_turns 2 ends after two engine calls") {
    ScriptedEngine engine(*f.tok, {{"hmm"}, {"still nothing<|endoftext|>"}});
    auto s = f.run(engine, config_args("search_corpus: /nonexistent\n"));
    CHECK(s.response == "hmm" + invalid + "still nothing<|endoftext|>" + invalid);
    CHECK(engine.requests.size() == 2);
    CHECK(s.loss_mask->back() == 0);
    CHECK(s.metadata.at("search_r1").at("invalid_actions").as_int() == 2);
    CHECK(s.status == vime::SampleStatus::kCompleted);
  }
  SECTION("a length finish ends the sample, truncated") {
    ScriptedEngine engine(*f.tok, {{"<think>long", "length"}});
    auto s = f.run(engine, config_args("max_turns: 3\n"));
    CHECK(s.response == "<think>long");
    CHECK(s.status == vime::SampleStatus::kTruncated);
  }
  SECTION("an abort ends the sample, aborted") {
    ScriptedEngine engine(*f.tok, {{"", "abort"}});
    auto s = f.run(engine, config_args("{}"));
    CHECK(s.status == vime::SampleStatus::kAborted);
  }
  SECTION("an unreachable server gives empty information, as slime's local_search") {
    ScriptedEngine engine(*f.tok, {{"<search>x</search>"}, {"<answer>y</answer>"}});
    auto s = f.run(engine, config_args("search_url: http://127.0.0.1:1/retrieve\n"));
    CHECK(s.response == "<search>x</search>" + info_block("") + "<answer>y</answer>");
  }
  SECTION("the in-process index when no URL is given") {
    vime::test::TempDir dir;
    std::string jsonl;
    for (const auto& d : corpus()) {
      jsonl += vime::Json(vime::Json::Object{{"id", d.id}, {"contents", d.contents}}).dump() + "\n";
    }
    auto path = dir.write("corpus.jsonl", jsonl);
    ScriptedEngine engine(*f.tok, {{"<search>mountain</search>"}, {"<answer>x</answer>"}});
    auto s = f.run(engine, config_args("search_corpus: " + path.string() +
                                       "\nsearch_index: " + (dir.path() / "idx").string() + "\n"));
    CHECK(s.response ==
          "<search>mountain</search>" +
              info_block("Doc 1(Title: \"Osterhaven\") Osterhaven is a mountain town.") +
              "<answer>x</answer>");
    CHECK(std::filesystem::exists(dir.path() / "idx" / "bm25.index"));
  }
  SECTION("bad configuration is a usage error naming the key") {
    ScriptedEngine engine(*f.tok, {});
    CHECK_THROWS_WITH(f.run(engine, config_args("search_backend: google\n")),
                      Catch::Contains("google"));
    CHECK_THROWS_WITH(f.run(engine, config_args("max_turns: 0\n")), Catch::Contains("max_turns"));
  }
}

TEST_CASE("--rollout-plugin resolves the kind from the plugin's exports", "[search_r1]") {
  SECTION("a generate plugin with a reward: both flags") {
    auto args = parse_flags({"--rollout-plugin", kPlugin});
    auto set = vime::plugin::resolve_rollout_plugin(args);
    CHECK(args.get_string("custom_generate_function_path") == kPlugin);
    CHECK(args.get_string("custom_rm_path") == kPlugin);
    CHECK_FALSE(args.is_set("rollout_function_path"));
    CHECK(set.size() == 2);
  }
  SECTION("a reward the run names wins over the plugin's") {
    auto args = parse_flags({"--rollout-plugin", kPlugin, "--rm-type", "math"});
    vime::plugin::resolve_rollout_plugin(args);
    CHECK_FALSE(args.is_set("custom_rm_path"));
  }
  SECTION("a rollout function plugin") {
    const std::string best_of_n = std::string(VIME_EXAMPLE_PLUGIN_DIR) + "/libbest_of_n_rollout.so";
    auto args = parse_flags({"--rollout-plugin", best_of_n});
    vime::plugin::resolve_rollout_plugin(args);
    CHECK(args.get_string("rollout_function_path") == best_of_n);
    CHECK_FALSE(args.is_set("custom_generate_function_path"));
  }
  SECTION("errors name the flag") {
    auto twice =
        parse_flags({"--rollout-plugin", kPlugin, "--custom-generate-function-path", kPlugin});
    CHECK_THROWS_WITH(vime::plugin::resolve_rollout_plugin(twice),
                      Catch::Contains("pass only one"));
    auto reward_only = parse_flags({"--rollout-plugin", vime::test::plugin_path("good_plugins")});
    CHECK_THROWS_WITH(
        vime::plugin::resolve_rollout_plugin(reward_only),
        Catch::Contains("--rollout-plugin") && Catch::Contains("no rollout or generate function"));
    auto missing = parse_flags({"--rollout-plugin", "/nonexistent/x.so"});
    CHECK_THROWS_AS(vime::plugin::resolve_rollout_plugin(missing), vime::UsageError);
  }
}
