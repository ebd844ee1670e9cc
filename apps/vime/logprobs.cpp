// vime logprobs: scores data under a model, to debug train/rollout mismatch.
//   vime logprobs (--hf-checkpoint DIR | --load CKPT) --input IN.jsonl --output OUT.jsonl
//                 [--temperature T]
// Each input line {"tokens": [...], "response_length": n} is written back with "log_probs" (one per
// response token: log p(token_t | tokens_<t) for the last n positions) and "entropy" (same length).
#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <cstdio>
#include <fstream>
#include <optional>

#include "commands.hpp"
#include "vime/ckpt/checkpoint.hpp"
#include "vime/core/arg_parser.hpp"
#include "vime/core/atomic_file.hpp"
#include "vime/core/flags/command_flags.hpp"
#include "vime/error.hpp"
#include "vime/json.hpp"
#include "vime/train/log_probs.hpp"

namespace vime::app {
namespace {

constexpr const char* kUsage =
    R"(usage: vime logprobs (--hf-checkpoint DIR | --load CKPT [--ckpt-step N])
                     --input IN.jsonl --output OUT.jsonl [--temperature T]
                     [--dtype float32|bfloat16] [--device cpu|cuda] [--max-tokens-per-batch N]

Writes each input line {"tokens": [...], "response_length": n, ...} back with "log_probs" (for
each of the last n tokens, log p(token | the tokens before it) at temperature T, in fp32) and
"entropy" (of the same distributions). Defaults: T 1.0, float32, cuda when available, 8192.
)";

struct LogprobsOptions {
  std::optional<std::string> hf_checkpoint, load;
  std::string input, output;
  std::optional<int64_t> ckpt_step;
  double temperature = 1.0;
  std::string dtype = "float32";
  std::optional<std::string> device;
  int64_t max_tokens = 8192;

  // The flags of core::flags::logprobs_command(), checked.
  static LogprobsOptions from(const Args& args) {
    LogprobsOptions o;
    if (args.is_set("hf_checkpoint")) o.hf_checkpoint = args.get_string("hf_checkpoint");
    if (args.is_set("load")) o.load = args.get_string("load");
    o.ckpt_step = args.get_optional_int("ckpt_step");
    o.input = args.get_string("input");
    o.output = args.get_string("output");
    o.temperature = args.get_double("temperature");
    o.dtype = args.get_string("dtype");
    if (args.is_set("device")) o.device = args.get_string("device");
    o.max_tokens = args.get_int("max_tokens_per_batch");
    if (o.hf_checkpoint.has_value() == o.load.has_value()) {
      throw UsageError("give exactly one of --hf-checkpoint and --load");
    }
    if (o.temperature <= 0) throw UsageError("--temperature must be > 0");
    return o;
  }
};

struct Row {
  Json json;
  std::vector<int64_t> tokens;
  int64_t response_length = 0;
};

std::vector<Row> read_rows(const std::string& path, int64_t vocab_size) {
  std::ifstream in(path);
  if (!in) throw UsageError("--input " + path + ": cannot read");
  std::vector<Row> rows;
  std::string line;
  int64_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = path + ":" + std::to_string(number);
    Row row;
    row.json = Json::parse(line, where);
    const Json* tokens = row.json.find("tokens");
    const Json* response = row.json.find("response_length");
    if (!row.json.is_object() || tokens == nullptr || !tokens->is_array() || response == nullptr ||
        !response->is_int()) {
      throw Error(where + ": expected {\"tokens\": [ints], \"response_length\": int}");
    }
    for (const auto& t : tokens->as_array()) {
      if (!t.is_int() || t.as_int() < 0 || t.as_int() >= vocab_size) {
        throw Error(where + ": token " + t.dump() + " is not an id below the vocabulary size " +
                    std::to_string(vocab_size));
      }
      row.tokens.push_back(t.as_int());
    }
    row.response_length = response->as_int();
    if (row.response_length < 1 || row.response_length >= static_cast<int64_t>(row.tokens.size())) {
      throw Error(
          where + ": response_length " + std::to_string(row.response_length) +
          " must be between 1 and len(tokens) - 1 = " + std::to_string(row.tokens.size() - 1));
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace

int run_logprobs(const Arguments& argv) {
  const auto& flags = core::flags::logprobs_flags();
  if (auto code = help_exit_code(argv, kUsage, flags)) return *code;
  const auto o = LogprobsOptions::from(core::parse_args(argv, flags));
  const std::string source = o.hf_checkpoint ? *o.hf_checkpoint : *o.load;
  auto resolved = ckpt::resolve_checkpoint(source, o.ckpt_step);
  if (!resolved) {
    throw UsageError((o.hf_checkpoint ? "--hf-checkpoint " : "--load ") + source +
                     ": no HF model or vime checkpoint there");
  }
  const at::Device device = o.device
                                ? at::Device(*o.device)
                                : (at::hasCUDA() ? at::Device(at::kCUDA) : at::Device(at::kCPU));
  auto model =
      ckpt::load_model(*resolved, o.dtype == "bfloat16" ? at::kBFloat16 : at::kFloat, device);
  model->set_requires_grad(false);
  auto rows = read_rows(o.input, model->config().vocab_size);
  at::NoGradGuard no_grad;
  std::string out_text;
  for (size_t begin = 0; begin < rows.size();) {
    size_t end = begin;
    int64_t tokens = 0;
    std::vector<std::vector<int64_t>> sequences;
    std::vector<int64_t> totals, responses;
    while (
        end < rows.size() &&
        (end == begin || tokens + static_cast<int64_t>(rows[end].tokens.size()) <= o.max_tokens)) {
      tokens += static_cast<int64_t>(rows[end].tokens.size());
      sequences.push_back(rows[end].tokens);
      totals.push_back(static_cast<int64_t>(rows[end].tokens.size()));
      responses.push_back(rows[end].response_length);
      ++end;
    }
    auto batch = PackedBatch::pack(sequences, device);
    auto logits = model->forward(batch);
    auto rr = train::response_rows(batch.tokens, totals, responses);
    auto scored = train::token_log_probs(logits, rr.rows, rr.targets, o.temperature);
    auto lp = scored.log_probs.to(at::kCPU).to(at::kDouble).contiguous();
    auto ent = scored.entropy.to(at::kCPU).to(at::kDouble).contiguous();
    int64_t offset = 0;
    for (size_t r = begin; r < end; ++r) {
      const int64_t n = rows[r].response_length;
      const double* lp_data = lp.data_ptr<double>() + offset;
      const double* ent_data = ent.data_ptr<double>() + offset;
      rows[r].json["log_probs"] = Json(std::vector<double>(lp_data, lp_data + n));
      rows[r].json["entropy"] = Json(std::vector<double>(ent_data, ent_data + n));
      out_text += rows[r].json.dump() + "\n";
      offset += n;
    }
    begin = end;
  }
  vime::write_text_file_atomic(o.output, out_text);
  std::fprintf(stderr, "vime logprobs: scored %zu lines with %s on %s\n", rows.size(),
               resolved->dir.c_str(), device.str().c_str());
  return 0;
}

}  // namespace vime::app
