// make_search_task: writes the synthetic search-QA task (synthetic_qa.hpp):
//   OUT/corpus.jsonl                 one passage per fictional person (Search-R1's corpus format)
//   OUT/data/train.jsonl, test.jsonl Search-R1 prompts and {"ground_truth": {"target": [...]}}
//   OUT/model/                       with --model: a tiny random Qwen3 whose tokenizer has the
//                                    Search-R1 tags as single tokens
// --tag-biased makes that model draw every token from one fixed distribution that favours the
// tags, so a CPU test sees searches, information blocks and answers without any training.
#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <charconv>
#include <cmath>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "arith_task.hpp"
#include "arith_tokenizer.hpp"
#include "synthetic_qa.hpp"
#include "vime/core/atomic_file.hpp"
#include "vime/error.hpp"
#include "vime/model/model.hpp"
#include "vime/tokenizer/hf_tokenizer.hpp"

namespace fs = std::filesystem;
using vime::UsageError;

namespace {

constexpr const char* kUsage = R"(usage: make_search_task --out DIR [--people N] [--num-train N]
       [--num-test N] [--seed S] [--model] [--tag-biased]

  --people N     fictional people, one passage each (default 200)
  --num-train N  training questions (default 64), --num-test N test questions (default 16)
  --seed S       generator seed (default 1)
  --model        also write OUT/model: a tiny Qwen3 (hidden 64, 2 layers) with the tag tokenizer
  --tag-biased   with --model: every position samples from one distribution favouring the tags
)";

constexpr std::string_view kTags[] = {"<think>",       "</think>",       "<search>", "</search>",
                                      "<information>", "</information>", "<answer>", "</answer>"};

struct Options {
  fs::path out;
  int64_t people = 200, num_train = 64, num_test = 16;
  uint64_t seed = 1;
  bool model = false, tag_biased = false;
};

int64_t parse_count(const std::string& flag, const std::string& value) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || end != value.data() + value.size() || v < 0) {
    throw UsageError(flag + ": '" + value + "' is not a non-negative integer");
  }
  return v;
}

Options parse(const std::vector<std::string>& argv, bool& help) {
  Options o;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& flag = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argv.size()) throw UsageError(flag + " needs a value");
      return argv[++i];
    };
    if (flag == "--help" || flag == "-h") {
      help = true;
    } else if (flag == "--out") {
      o.out = value();
    } else if (flag == "--people") {
      o.people = parse_count(flag, value());
    } else if (flag == "--num-train") {
      o.num_train = parse_count(flag, value());
    } else if (flag == "--num-test") {
      o.num_test = parse_count(flag, value());
    } else if (flag == "--seed") {
      o.seed = static_cast<uint64_t>(parse_count(flag, value()));
    } else if (flag == "--model") {
      o.model = true;
    } else if (flag == "--tag-biased") {
      o.tag_biased = true;
    } else {
      throw UsageError("unknown flag " + flag);
    }
  }
  if (!help && o.out.empty()) throw UsageError("--out DIR is required");
  if (o.people < 1) throw UsageError("--people must be >= 1");
  if (o.num_train + o.num_test > 3 * o.people) {
    throw UsageError("--num-train + --num-test must be <= 3 * --people (three questions each)");
  }
  if (o.tag_biased && !o.model) throw UsageError("--tag-biased goes with --model");
  return o;
}

void write_jsonl(const fs::path& path, const std::vector<vime::Json>& rows) {
  std::string text;
  for (const auto& row : rows) text += row.dump() + "\n";
  vime::write_text_file_atomic(path, text);
}

// Hidden dimension 0 carries a constant 1 through every layer (its embedding column is 1, the
// layers never write to it) and the final norm keeps only that dimension, so the logits are
// lm_head[:, 0] times a positive scale at every position: one fixed distribution.
void bias_towards_tags(vime::Model& model, const vime::Tokenizer& tok) {
  at::NoGradGuard no_grad;
  at::Tensor lm_head;
  for (auto& [name, p] : model.named_parameters()) {
    if (name == "model.embed_tokens.weight") p.select(1, 0).fill_(1.0);
    if (name.ends_with("self_attn.o_proj.weight") || name.ends_with("mlp.down_proj.weight")) {
      p.select(0, 0).zero_();
    }
    if (name == "model.norm.weight") {
      p.zero_();
      p[0] = 1.0;
    }
    if (name == "lm_head.weight") lm_head = p;
  }
  if (!lm_head.defined()) throw vime::Error("the tag-biased model needs an untied lm_head");
  // normed[0] = 1 / rms(h) ~ sqrt(hidden) / |h|: divide the wanted logits by sqrt(hidden).
  const double scale = std::sqrt(static_cast<double>(lm_head.size(1)));
  lm_head.select(1, 0).fill_(-8.0 / scale);
  auto set = [&](std::string_view text, double logit) {
    for (int32_t id : tok.encode(text)) lm_head[id][0] = logit / scale;
  };
  for (char c = 'a'; c <= 'z'; ++c) set(std::string(1, c), 0.0);
  set(" ", 0.5);
  for (std::string_view tag : kTags) set(tag, 1.5);
  set("<search>", 2.5);
  set("</search>", 2.0);
  set("</answer>", 1.8);
  lm_head[*tok.eos_token_id()][0] = -1.0 / scale;
}

void write_task(const Options& o) {
  const auto people = vime::search_task::make_people(o.people, o.seed);
  std::error_code ec;
  fs::create_directories(o.out / "data", ec);
  if (ec) throw vime::Error("cannot create " + o.out.string() + ": " + ec.message());
  std::vector<vime::Json> corpus;
  for (const auto& d : vime::search_task::make_corpus(people)) {
    corpus.push_back(vime::Json::Object{{"id", d.id}, {"contents", d.contents}});
  }
  write_jsonl(o.out / "corpus.jsonl", corpus);
  // Test questions first, then train: the two never share a question.
  const auto questions = vime::search_task::make_questions(people);
  std::vector<vime::Json> train, test;
  for (int64_t i = 0; i < o.num_test; ++i)
    test.push_back(vime::search_task::data_row(questions[i]));
  for (int64_t i = 0; i < o.num_train; ++i) {
    train.push_back(vime::search_task::data_row(questions[o.num_test + i]));
  }
  write_jsonl(o.out / "data/train.jsonl", train);
  write_jsonl(o.out / "data/test.jsonl", test);
  if (!o.model) return;

  auto tok_files = vime::quickstart::make_arith_tokenizer(kTags);
  vime::quickstart::ArithTaskOptions shape_options;
  shape_options.model.hidden_size = 64;
  shape_options.model.intermediate_size = 128;
  shape_options.model.num_layers = 2;
  shape_options.model.head_dim = 16;
  shape_options.model.max_position_embeddings = 4096;
  shape_options.model.tie_word_embeddings = !o.tag_biased;
  auto config = vime::quickstart::arith_model_config(shape_options, tok_files.vocab_size);
  std::function<void(vime::Model&)> edit;
  std::unique_ptr<vime::tokenizer::HfTokenizer> tok;
  if (o.tag_biased) {
    tok = vime::tokenizer::HfTokenizer::from_json(tok_files.tokenizer_json,
                                                  tok_files.tokenizer_config_json);
    edit = [&](vime::Model& model) { bias_towards_tags(model, *tok); };
  }
  vime::quickstart::write_tiny_model(o.out / "model", config, tok_files, o.seed, edit);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    bool help = false;
    const Options o = parse(std::vector<std::string>(argv + 1, argv + argc), help);
    if (help) {
      std::cout << kUsage;
      return 0;
    }
    write_task(o);
    std::cout << "wrote the search task under " << o.out.string() << " (" << o.people
              << " passages, " << o.num_train << " train, " << o.num_test << " test questions"
              << (o.model ? ", model/" : "") << ")\n";
    return 0;
  } catch (const UsageError& e) {
    std::cerr << "make_search_task: error: " << e.what() << "\n" << kUsage;
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "make_search_task: error: " << e.what() << "\n";
    return 1;
  }
}
