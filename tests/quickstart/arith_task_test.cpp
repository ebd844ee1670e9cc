// The quickstart task generator: its model, tokenizer and data load with vime's own readers, the
// tokenizer matches HF's Rust tokenizers (goldens from
// scripts/goldens/make_arith_tokenizer_goldens.js), train and test never overlap, and bad flags are
// usage errors.
#include "arith_task.hpp"

#include <ATen/ATen.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <set>

#include "support/test_support.hpp"
#include "vime/ckpt/model_io.hpp"
#include "vime/ckpt/safetensors.hpp"
#include "vime/core/atomic_file.hpp"
#include "vime/json.hpp"
#include "vime/tokenizer/hf_tokenizer.hpp"

namespace {

namespace fs = std::filesystem;
using vime::quickstart::ArithTaskOptions;

ArithTaskOptions small_task(const fs::path& out) {
  ArithTaskOptions o;
  o.out = out;
  o.problems.digits = 2;
  o.problems.ops = "+-*";
  o.problems.num_train = 2000;
  o.problems.num_test = 200;
  o.model.hidden_size = 32;
  o.model.num_layers = 1;
  o.model.num_attention_heads = 2;
  o.model.num_key_value_heads = 1;
  o.model.head_dim = 16;
  o.model.intermediate_size = 64;
  return o;
}

std::vector<vime::Json> read_jsonl(const fs::path& path) {
  std::vector<vime::Json> rows;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);)
    rows.push_back(vime::Json::parse(line, path.string()));
  return rows;
}

int64_t answer_of(const std::string& input) {  // "37*45=" -> 1665
  auto op = input.find_first_of("+-*", 1);
  int64_t a = std::stoll(input.substr(0, op)), b = std::stoll(input.substr(op + 1));
  return input[op] == '+' ? a + b : input[op] == '-' ? a - b : a * b;
}

std::string sft_label(const vime::quickstart::ArithProblem& p) {  // as sft.jsonl writes it
  return vime::Json::parse(vime::quickstart::jsonl_row(p, true)).at("label").as_string();
}

}  // namespace

TEST_CASE("the task's model, config and tokenizer load with vime's readers", "[arith_task]") {
  vime::test::TempDir dir;
  auto files = vime::quickstart::write_arith_task(small_task(dir.path()));
  for (const auto& f : files) CHECK(fs::exists(dir.path() / f));
  const fs::path model_dir = dir.path() / "model";

  auto config = vime::ModelConfig::from_hf_dir(model_dir);
  CHECK(config.model_type == "qwen3");
  CHECK(config.hidden_size == 32);
  CHECK(config.qk_norm);
  auto tok = vime::tokenizer::HfTokenizer::from_directory(model_dir);
  CHECK(tok->vocab_size() == config.vocab_size);
  auto hf = vime::Json::parse(vime::read_text_file(model_dir / "config.json"));
  REQUIRE(tok->eos_token_id().has_value());
  CHECK(hf.at("architectures").at(0).as_string() == "Qwen3ForCausalLM");
  CHECK(hf.at("eos_token_id").as_int() == *tok->eos_token_id());
  CHECK(tok->id_to_token(*tok->eos_token_id()) == "<|endoftext|>");
  CHECK(tok->pad_token_id() == tok->eos_token_id());
  CHECK(tok->encode("\\boxed{82}") ==
        std::vector<int32_t>{*tok->token_to_id("\\boxed{"), '8', '2', '}'});

  // The safetensors hold the HF names at the HF vocabulary; the model loads and runs.
  vime::ckpt::SafetensorsFile st(model_dir / "model.safetensors");
  CHECK(st.get("model.embed_tokens.weight").size(0) == config.vocab_size);
  CHECK_FALSE(st.contains("lm_head.weight"));  // tied
  auto model = vime::ckpt::load_hf_model(model_dir, at::kFloat, at::kCPU);
  auto ids = tok->encode("12+34=");
  auto batch = vime::PackedBatch::pack({std::vector<int64_t>(ids.begin(), ids.end())}, at::kCPU);
  auto logits = model->forward(batch);
  CHECK(logits.size(0) == static_cast<int64_t>(ids.size()));
  CHECK(logits.size(1) == config.vocab_size);
  CHECK(logits.isfinite().all().item<bool>());
}

TEST_CASE("the task tokenizer agrees with HF's tokenizers on the goldens", "[arith_task]") {
  vime::test::TempDir dir;
  vime::quickstart::write_arith_task(small_task(dir.path()));
  auto tok = vime::tokenizer::HfTokenizer::from_directory(dir.path() / "model");
  auto goldens =
      read_jsonl(fs::path(VIME_SOURCE_DIR) / "tests/data/quickstart/arith_tokenizer_goldens.jsonl");
  REQUIRE(goldens.size() >= 300);
  int mismatches = 0;
  for (const auto& g : goldens) {
    std::vector<int32_t> want;
    for (const auto& id : g.at("ids").as_array()) want.push_back(static_cast<int32_t>(id.as_int()));
    auto got = tok->encode(g.at("text").as_string());
    if (got != want) {
      ++mismatches;
      UNSCOPED_INFO("encode differs on " << g.at("text").dump());
    }
    if (tok->decode(want) != g.at("decoded").as_string()) {
      ++mismatches;
      UNSCOPED_INFO("decode differs on " << g.at("text").dump());
    }
  }
  CHECK(mismatches == 0);
}

TEST_CASE("train and test are disjoint, labels are right, output is deterministic",
          "[arith_task]") {
  vime::test::TempDir a, b, c;
  auto opts = small_task(a.path());
  vime::quickstart::write_arith_task(opts);
  auto train = read_jsonl(a.path() / "data/train.jsonl");
  auto sft = read_jsonl(a.path() / "data/sft.jsonl");
  auto test = read_jsonl(a.path() / "data/test.jsonl");
  REQUIRE(train.size() == 2000);
  REQUIRE(sft.size() == 2000);
  REQUIRE(test.size() == 200);
  std::set<std::string> train_inputs, ops;
  for (size_t i = 0; i < train.size(); ++i) {
    const auto& input = train[i].at("input").as_string();
    train_inputs.insert(input);
    ops.insert(input.substr(input.find_first_of("+-*", 1), 1));
    CHECK(train[i].at("label").as_string() == std::to_string(answer_of(input)));
    CHECK(sft[i].at("input").as_string() == input);
    CHECK(sft[i].at("label").as_string() == "\\boxed{" + train[i].at("label").as_string() + "}");
  }
  CHECK(train_inputs.size() == train.size());  // no duplicates
  CHECK(ops == std::set<std::string>{"+", "-", "*"});
  for (const auto& row : test) {
    CHECK(train_inputs.count(row.at("input").as_string()) == 0);
    CHECK(answer_of(row.at("input").as_string()) >= 0);  // '-' draws a >= b
  }

  opts.out = b.path();
  vime::quickstart::write_arith_task(opts);
  for (const char* f : {"data/train.jsonl", "data/test.jsonl", "model/model.safetensors"}) {
    CHECK(vime::read_text_file(a.path() / f) == vime::read_text_file(b.path() / f));
  }
  opts.out = c.path();
  opts.problems.seed = 2;
  vime::quickstart::write_arith_task(opts);
  CHECK(vime::read_text_file(a.path() / "data/test.jsonl") !=
        vime::read_text_file(c.path() / "data/test.jsonl"));
}

TEST_CASE("--zero-pad 1 writes every operand with --digits digits", "[arith_task]") {
  vime::quickstart::ArithSpec spec{.num_train = 300, .num_test = 50, .zero_pad = true};
  auto padded = vime::quickstart::make_problems(spec);
  spec.zero_pad = false;
  auto plain = vime::quickstart::make_problems(spec);
  REQUIRE(padded.train.size() == plain.train.size());
  int short_operands = 0;
  for (size_t i = 0; i < padded.train.size(); ++i) {
    const auto& input = padded.train[i].input;  // "07+45="
    REQUIRE(input.size() == 6);
    CHECK(input[2] == '+');
    CHECK(std::to_string(answer_of(input)) == padded.train[i].label);
    // The same draws: only the spelling of one-digit operands differs.
    CHECK(answer_of(input) == answer_of(plain.train[i].input));
    short_operands += plain.train[i].input.size() < 6;
  }
  CHECK(short_operands > 0);
}

TEST_CASE("--scratch reversed: SFT labels write the answer's digits backwards, then the answer",
          "[arith_task]") {
  CHECK(vime::quickstart::reversed_digits(52, 3) == "250");
  CHECK(vime::quickstart::reversed_digits(100, 3) == "001");
  CHECK(vime::quickstart::reversed_digits(0, 3) == "000");
  CHECK(vime::quickstart::reversed_digits(1665, 2) == "5661");  // never truncates
  vime::test::TempDir dir;
  auto opts = small_task(dir.path());
  for (const char* ops : {"+", "+-*"}) {
    opts.problems.ops = ops;
    opts.problems.reversed_scratch = true;
    vime::quickstart::write_arith_task(opts);
    auto train = read_jsonl(dir.path() / "data/train.jsonl");
    auto sft = read_jsonl(dir.path() / "data/sft.jsonl");
    REQUIRE(sft.size() == train.size());
    const size_t width = std::string(ops) == "+" ? 3 : 4;  // 99+99 = 198, 99*99 = 9801
    for (size_t i = 0; i < sft.size(); ++i) {
      const auto& label = sft[i].at("label").as_string();  // "250\boxed{52}"
      const int64_t answer = answer_of(sft[i].at("input").as_string());
      INFO(sft[i].dump());
      REQUIRE(label.size() > width);
      std::string scratch = label.substr(0, width);
      CHECK(std::stoll(std::string(scratch.rbegin(), scratch.rend())) == answer);
      CHECK(label.substr(width) == "\\boxed{" + std::to_string(answer) + "}");
      // GRPO and eval grade the answer itself.
      CHECK(train[i].at("label").as_string() == std::to_string(answer));
    }
  }
}

TEST_CASE("--sft-unreversed: that share of the SFT labels box the working unreversed",
          "[arith_task]") {
  vime::quickstart::ArithSpec spec{
      .num_train = 3000, .num_test = 200, .zero_pad = true, .reversed_scratch = true};
  const auto right = vime::quickstart::make_problems(spec);
  spec.sft_unreversed = 70;
  const auto sloppy = vime::quickstart::make_problems(spec);
  REQUIRE(sloppy.train.size() == right.train.size());
  int wide = 0, unreversed = 0;
  for (size_t i = 0; i < sloppy.train.size(); ++i) {
    const auto& p = sloppy.train[i];
    INFO(p.input << " " << p.scratch << " " << p.sft_answer);
    // The same problems, working and right labels (what GRPO's reward checks).
    CHECK(p.input == right.train[i].input);
    CHECK(p.label == right.train[i].label);
    CHECK(p.scratch == right.train[i].scratch);
    const int64_t answer = answer_of(p.input);
    CHECK(p.scratch == vime::quickstart::reversed_digits(answer, 3));
    wide += answer >= 100;
    if (p.sft_answer.empty()) {
      CHECK(sft_label(p) == p.scratch + "\\boxed{" + p.label + "}");
      continue;
    }
    ++unreversed;
    CHECK(answer >= 100);  // only a 3-digit sum's working reads as an answer
    CHECK(p.sft_answer == p.scratch);
    CHECK(sft_label(p) == p.scratch + "\\boxed{" + p.scratch + "}");  // "501\boxed{501}"
  }
  for (const auto& p : sloppy.test) CHECK(p.sft_answer.empty());
  REQUIRE(wide > 1000);
  CHECK(unreversed > 0.65 * wide);
  CHECK(unreversed < 0.75 * wide);
  spec.sft_unreversed = 100;
  unreversed = 0;
  for (const auto& p : vime::quickstart::make_problems(spec).train)
    unreversed += !p.sft_answer.empty();
  CHECK(unreversed == wide);
}

TEST_CASE("make_arith_task: bad flags are usage errors (exit 2)", "[arith_task]") {
  vime::test::TempDir dir;
  const std::string bin = VIME_MAKE_ARITH_TASK_BIN;
  const std::string out = " --out " + (dir.path() / "t").string();
  struct Case {
    std::string flags, message;
  };
  for (const auto& c : std::vector<Case>{
           {"", "--out DIR is required"},
           {out + " --digits 0", "--digits must be between 1 and 9"},
           {out + " --digits two", "--digits takes an integer, got 'two'"},
           {out + " --ops +/", "--ops takes characters of \"+-*\", got '/'"},
           {out + " --digits 1 --num-train 100", "more than half of the 100 distinct problems"},
           {out + " --num-test", "--num-test needs a value"},
           {out + " --frobnicate 1", "unknown argument '--frobnicate'"},
           {out + " --num-attention-heads 3", "multiple of --num-key-value-heads"},
           {out + " --scratch backwards", "--scratch takes none or reversed, got 'backwards'"},
           {out + " --sft-unreversed 101", "--sft-unreversed must be between 0 and 100"},
           {out + " --sft-unreversed 10", "it needs --scratch reversed"},
       }) {
    auto r = vime::test::run_command(bin + c.flags);
    INFO(c.flags << " -> " << r.output);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.output, Catch::Contains(c.message) && Catch::Contains("usage: make_arith_task"));
  }
  CHECK_FALSE(fs::exists(dir.path() / "t"));
  auto ok = vime::test::run_command(bin + out + " --num-train 50 --num-test 10 --hidden-size 16 " +
                                    "--num-layers 1 --num-attention-heads 2 --head-dim 8");
  INFO(ok.output);
  CHECK(ok.exit_code == 0);
  CHECK(vime::test::count_lines(vime::read_text_file(dir.path() / "t/data/test.jsonl")) == 10);
}
