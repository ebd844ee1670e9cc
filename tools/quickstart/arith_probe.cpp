// arith_probe: how fast vime's trainer learns the quickstart task on this machine. SFT on
// data/sft.jsonl with the actor (--loss-type sft_loss), then optionally GRPO with sampled responses
// and the boxed-answer reward, printing greedy test accuracy against training wall time (evaluation
// time excluded). Generation is repeated full forwards (no KV cache): fine for 10-token answers.
//
//   build/bin/arith_probe --task DIR [--sft-seconds 180] [--grpo-seconds 0] [--lr 1e-3]
//       [--sft-steps 0] [--grpo-rollouts 0] [--grpo-gbs prompts*n] [--batch 64] [--grpo-lr 1e-4]
//       [--prompts 16] [--n 8]
//       [--eval-every 20]
//       [--eval-n 200]
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <ATen/core/grad_mode.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "vime/ckpt/model_io.hpp"
#include "vime/core/arg_parser.hpp"
#include "vime/error.hpp"
#include "vime/json.hpp"
#include "vime/rollout/reward_post_process.hpp"
#include "vime/tokenizer/hf_tokenizer.hpp"
#include "vime/train/actor.hpp"

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

struct Row {
  std::vector<int64_t> prompt;
  std::string label;  // the bare answer, "82"
};

std::vector<Row> read_rows(const std::string& path, const vime::tokenizer::HfTokenizer& tok) {
  std::ifstream in(path);
  if (!in) throw vime::UsageError("cannot read " + path);
  std::vector<Row> rows;
  for (std::string line; std::getline(in, line);) {
    auto j = vime::Json::parse(line, path);
    auto ids = tok.encode(j.at("input").as_string());
    rows.push_back({std::vector<int64_t>(ids.begin(), ids.end()), j.at("label").as_string()});
  }
  return rows;
}

// 1 when the last \boxed{...} of `response` is `label` (the math reward on these answers).
double boxed_reward(const std::string& response, const std::string& label) {
  auto start = response.rfind("\\boxed{");
  if (start == std::string::npos) return 0.0;
  start += 7;
  auto end = response.find('}', start);
  if (end == std::string::npos) return 0.0;
  return response.substr(start, end - start) == label ? 1.0 : 0.0;
}

struct Generated {
  std::vector<std::vector<int64_t>> responses;
  std::vector<std::vector<float>> log_probs;  // post-temperature, of the sampled tokens
};

// Greedy when temperature == 0, else sampling; stops each sequence at EOS or max_new tokens.
Generated generate(vime::Model& model, const std::vector<std::vector<int64_t>>& prompts,
                   int64_t eos, int64_t max_new, double temperature, at::Generator* gen) {
  at::NoGradGuard no_grad;
  Generated out;
  out.responses.resize(prompts.size());
  out.log_probs.resize(prompts.size());
  std::vector<size_t> live(prompts.size());
  for (size_t i = 0; i < live.size(); ++i) live[i] = i;
  for (int64_t step = 0; step < max_new && !live.empty(); ++step) {
    std::vector<std::vector<int64_t>> seqs;
    for (size_t i : live) {
      auto s = prompts[i];
      s.insert(s.end(), out.responses[i].begin(), out.responses[i].end());
      seqs.push_back(std::move(s));
    }
    auto batch = vime::PackedBatch::pack(seqs, model.device());
    auto hidden = model.forward_hidden(batch);
    std::vector<int64_t> last;
    for (size_t k = 1; k < batch.varlen.cu_seqlens.size(); ++k) {
      last.push_back(batch.varlen.cu_seqlens[k] - 1);
    }
    auto logits = model.logits(hidden.index_select(0, at::tensor(last))).to(at::kFloat);
    at::Tensor next, logp;
    if (temperature <= 0) {
      next = logits.argmax(-1);
      logp = at::zeros({logits.size(0)});
    } else {
      auto lp = at::log_softmax(logits / temperature, -1);
      next = at::multinomial(lp.exp(), 1, false, *gen).squeeze(1);
      logp = lp.gather(1, next.unsqueeze(1)).squeeze(1);
    }
    std::vector<size_t> still;
    for (size_t k = 0; k < live.size(); ++k) {
      int64_t t = next[k].item<int64_t>();
      out.responses[live[k]].push_back(t);
      out.log_probs[live[k]].push_back(logp[k].item<float>());
      if (t != eos) still.push_back(live[k]);
    }
    live = std::move(still);
  }
  return out;
}

std::string decode(const vime::tokenizer::HfTokenizer& tok, const std::vector<int64_t>& ids) {
  std::vector<int32_t> ids32(ids.begin(), ids.end());
  return tok.decode(ids32, true);
}

double accuracy(vime::Model& model, const vime::tokenizer::HfTokenizer& tok,
                const std::vector<Row>& test, int64_t eos) {
  std::vector<std::vector<int64_t>> prompts;
  for (const auto& r : test) prompts.push_back(r.prompt);
  auto g = generate(model, prompts, eos, 16, 0.0, nullptr);
  double correct = 0;
  for (size_t i = 0; i < test.size(); ++i)
    correct += boxed_reward(decode(tok, g.responses[i]), test[i].label);
  return correct / static_cast<double>(test.size());
}

std::map<std::string, std::string> parse_flags(int argc, char** argv) {
  std::map<std::string, std::string> f = {{"task", ""},
                                          {"sft-seconds", "180"},
                                          {"grpo-seconds", "0"},
                                          {"lr", "1e-3"},
                                          {"batch", "64"},
                                          {"grpo-lr", "1e-4"},
                                          {"prompts", "16"},
                                          {"n", "8"},
                                          {"eval-every", "20"},
                                          {"eval-n", "200"},
                                          {"temperature", "1.0"},
                                          {"seed", "1"},
                                          {"grpo-eval-every", "5"},
                                          {"sft-steps", "0"},
                                          {"grpo-gbs", "0"},
                                          {"grpo-rollouts", "0"}};
  for (int i = 1; i < argc; i += 2) {
    std::string k = argv[i];
    if (k.rfind("--", 0) != 0 || !f.count(k.substr(2)) || i + 1 >= argc) {
      throw vime::UsageError("bad argument '" + k + "' (see the header of arith_probe.cpp)");
    }
    f[k.substr(2)] = argv[i + 1];
  }
  if (f["task"].empty()) throw vime::UsageError("--task DIR is required");
  return f;
}

void print(const char* phase, int64_t step, double train_s, double loss, double acc,
           double reward) {
  std::printf(
      "{\"phase\":\"%s\",\"step\":%lld,\"train_s\":%.1f,\"loss\":%.4f,\"test_acc\":%.3f,"
      "\"reward\":%.3f}\n",
      phase, static_cast<long long>(step), train_s, loss, acc, reward);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) try {
  auto f = parse_flags(argc, argv);
  const std::string task = f["task"];
  auto tok = vime::tokenizer::HfTokenizer::from_directory(task + "/model");
  const int64_t eos = *tok->eos_token_id();
  auto model = vime::ckpt::load_hf_model(task + "/model", at::kFloat, at::kCPU);
  auto train = read_rows(task + "/data/train.jsonl", *tok);
  auto test = read_rows(task + "/data/test.jsonl", *tok);
  test.resize(std::min<size_t>(test.size(), std::stoul(f["eval-n"])));
  std::printf("{\"threads\":%d,\"params\":%lld,\"train\":%zu,\"test\":%zu}\n",
              at::get_num_threads(), static_cast<long long>(model->config().num_parameters()),
              train.size(), test.size());

  const int64_t batch_size = std::stoll(f["batch"]);
  std::mt19937_64 rng(std::stoull(f["seed"]));
  std::uniform_int_distribution<size_t> pick(0, train.size() - 1);
  vime::train::SingleRank rank;

  // SFT: response = "\boxed{answer}" + EOS.
  {
    auto args = vime::core::parse_args(std::vector<std::string>{
        "--loss-type", "sft_loss", "--lr", f["lr"], "--lr-decay-style", "constant",
        "--global-batch-size", f["batch"], "--micro-batch-size", f["batch"]});
    vime::train::Actor actor(args, *model, nullptr, rank);
    const double budget = std::stod(f["sft-seconds"]);
    const int64_t every = std::stoll(f["eval-every"]);
    double train_s = 0;
    print("sft", 0, 0, 0, accuracy(*model, *tok, test, eos), 0);
    const int64_t max_steps = std::stoll(f["sft-steps"]);  // 0: run until the time budget is spent
    for (int64_t step = 1; max_steps > 0 ? step <= max_steps : train_s < budget; ++step) {
      vime::train::TrainBatch b;
      for (int64_t i = 0; i < batch_size; ++i) {
        const auto& r = train[pick(rng)];
        auto resp = tok->encode("\\boxed{" + r.label + "}");
        auto seq = r.prompt;
        seq.insert(seq.end(), resp.begin(), resp.end());
        seq.push_back(eos);
        b.tokens.push_back(seq);
        b.response_lengths.push_back(static_cast<int64_t>(resp.size()) + 1);
      }
      auto t0 = Clock::now();
      auto m = actor.train(step, b);
      train_s += since(t0);
      if (step % every == 0 || (max_steps > 0 ? step == max_steps : train_s >= budget)) {
        print("sft", step, train_s, m.at("train/loss"), accuracy(*model, *tok, test, eos), 0);
      }
    }
  }

  // GRPO: --prompts prompts x --n samples, reward 1 for the right boxed answer.
  const double grpo_budget = std::stod(f["grpo-seconds"]);
  if (grpo_budget > 0 || std::stoll(f["grpo-rollouts"]) > 0) {
    const int64_t prompts = std::stoll(f["prompts"]), n = std::stoll(f["n"]);
    auto args = vime::core::parse_args(std::vector<std::string>{
        "--advantage-estimator", "grpo", "--n-samples-per-prompt", f["n"], "--global-batch-size",
        (std::stoll(f["grpo-gbs"]) > 0 ? f["grpo-gbs"] : std::to_string(prompts * n)), "--lr",
        f["grpo-lr"], "--lr-decay-style", "constant", "--eps-clip", "0.2", "--eps-clip-high",
        "0.28", "--entropy-coef", "0"});
    vime::train::Actor actor(args, *model, nullptr, rank);
    auto gen = at::make_generator<at::CPUGeneratorImpl>(std::stoull(f["seed"]));
    double train_s = 0;
    const int64_t every = std::stoll(f["grpo-eval-every"]);
    const int64_t max_rollouts = std::stoll(f["grpo-rollouts"]);  // 0: until the time budget
    for (int64_t rollout = 0; max_rollouts > 0 ? rollout < max_rollouts : train_s < grpo_budget;
         ++rollout) {
      auto t0 = Clock::now();
      std::vector<std::vector<int64_t>> ps;
      std::vector<const Row*> rows;
      for (int64_t p = 0; p < prompts; ++p) {
        const Row* r = &train[pick(rng)];
        for (int64_t k = 0; k < n; ++k) {
          ps.push_back(r->prompt);
          rows.push_back(r);
        }
      }
      auto g = generate(*model, ps, eos, 16, std::stod(f["temperature"]), &gen);
      vime::train::TrainBatch b;
      double reward_sum = 0;
      for (size_t i = 0; i < ps.size(); ++i) {
        auto seq = ps[i];
        seq.insert(seq.end(), g.responses[i].begin(), g.responses[i].end());
        b.tokens.push_back(seq);
        b.response_lengths.push_back(static_cast<int64_t>(g.responses[i].size()));
        double r = boxed_reward(decode(*tok, g.responses[i]), rows[i]->label);
        b.rewards.push_back(r);
        reward_sum += r;
      }
      // The actor takes post-processed rewards: grpo's group normalisation, as the rollout does it.
      b.rewards = vime::rollout::normalize_group_rewards(b.rewards, static_cast<size_t>(n), true);
      auto m = actor.train(rollout, b);
      train_s += since(t0);
      double acc = rollout % every == 0 ? accuracy(*model, *tok, test, eos) : -1;
      print("grpo", rollout, train_s, m.at("train/loss"), acc, reward_sum / ps.size());
    }
  }
  return 0;
} catch (const vime::UsageError& e) {
  std::cerr << "arith_probe: error: " << e.what() << "\n";
  return 2;
} catch (const std::exception& e) {
  std::cerr << "arith_probe: error: " << e.what() << "\n";
  return 1;
}
