#include "arith_problems.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_set>

#include "vime/error.hpp"
#include "vime/json.hpp"

namespace vime::quickstart {
namespace {

// splitmix64: fixed across compilers and standard libraries, unlike std distributions.
struct SplitMix64 {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  uint64_t below(uint64_t n) { return next() % n; }  // bias < 1e-9 for n < 10^10
};

int64_t pow10(int64_t digits) {
  int64_t v = 1;
  for (int64_t i = 0; i < digits; ++i) v *= 10;
  return v;
}

std::string operand(int64_t v, const ArithSpec& spec) {
  std::string text = std::to_string(v);
  if (spec.zero_pad && static_cast<int64_t>(text.size()) < spec.digits)
    text.insert(0, static_cast<size_t>(spec.digits) - text.size(), '0');
  return text;
}

// Digits of the widest answer `op` gives on operands below 10^digits ('-': a >= b).
int64_t answer_width(char op, int64_t digits) {
  return op == '+' ? digits + 1 : op == '-' ? digits : 2 * digits;
}

}  // namespace

std::string reversed_digits(int64_t answer, int64_t width) {
  std::string text = std::to_string(answer);
  if (static_cast<int64_t>(text.size()) < width)
    text.insert(0, static_cast<size_t>(width) - text.size(), '0');
  return {text.rbegin(), text.rend()};
}

double problem_space(const ArithSpec& spec) {
  double n = static_cast<double>(pow10(spec.digits));
  double total = 0;
  for (char op : spec.ops) total += op == '-' ? n * (n + 1) / 2 : n * n;
  return total;
}

void check_spec(const ArithSpec& spec) {
  if (spec.digits < 1 || spec.digits > 9) {
    throw UsageError("--digits must be between 1 and 9, got " + std::to_string(spec.digits));
  }
  if (spec.ops.empty()) throw UsageError("--ops must name at least one of + - *");
  for (size_t i = 0; i < spec.ops.size(); ++i) {
    char op = spec.ops[i];
    if (op != '+' && op != '-' && op != '*') {
      throw UsageError("--ops takes characters of \"+-*\", got '" + std::string(1, op) + "'");
    }
    if (spec.ops.find(op) != i) throw UsageError("--ops names '" + std::string(1, op) + "' twice");
  }
  if (spec.num_train < 1 || spec.num_test < 1) {
    throw UsageError("--num-train and --num-test must be at least 1");
  }
  // Rejection sampling of distinct problems stays fast while at most half the space is drawn.
  double wanted = static_cast<double>(spec.num_train + spec.num_test);
  if (wanted > problem_space(spec) / 2) {
    throw UsageError(
        "--num-train + --num-test = " + std::to_string(spec.num_train + spec.num_test) +
        " is more than half of the " + std::to_string(static_cast<int64_t>(problem_space(spec))) +
        " distinct problems of --digits " + std::to_string(spec.digits) + " --ops " + spec.ops +
        "; ask for fewer or raise --digits");
  }
  if (spec.sft_unreversed < 0 || spec.sft_unreversed > 100) {
    throw UsageError("--sft-unreversed is a percentage, 0 to 100, got " +
                     std::to_string(spec.sft_unreversed));
  }
  if (spec.sft_unreversed > 0 && !spec.reversed_scratch) {
    throw UsageError("--sft-unreversed leaves the working unreversed: it needs --scratch reversed");
  }
}

ArithSplit make_problems(const ArithSpec& spec) {
  check_spec(spec);
  SplitMix64 rng{spec.seed};
  // Its own stream, one draw per train problem: the problems stay those of the same seed.
  SplitMix64 teacher{spec.seed ^ 0x7EAC4E5ull};
  const uint64_t n = static_cast<uint64_t>(pow10(spec.digits));
  std::unordered_set<std::string> seen;
  ArithSplit split;
  int64_t width = 0;
  for (char op : spec.ops) width = std::max(width, answer_width(op, spec.digits));
  const int64_t total = spec.num_test + spec.num_train;
  while (static_cast<int64_t>(seen.size()) < total) {
    char op = spec.ops[rng.below(spec.ops.size())];
    int64_t a = static_cast<int64_t>(rng.below(n)), b = static_cast<int64_t>(rng.below(n));
    if (op == '-' && a < b) std::swap(a, b);
    std::string input = operand(a, spec) + op + operand(b, spec) + "=";
    if (!seen.insert(input).second) continue;
    int64_t answer = op == '+' ? a + b : op == '-' ? a - b : a * b;
    const bool is_test = static_cast<int64_t>(split.test.size()) < spec.num_test;
    ArithProblem problem{std::move(input), std::to_string(answer), std::string(), std::string()};
    if (spec.reversed_scratch) problem.scratch = reversed_digits(answer, width);
    if (!is_test && static_cast<int64_t>(teacher.below(100)) < spec.sft_unreversed &&
        static_cast<int64_t>(problem.label.size()) == width)
      problem.sft_answer = problem.scratch;  // boxed as written: "501\boxed{501}"
    (is_test ? split.test : split.train).push_back(std::move(problem));
  }
  return split;
}

std::string jsonl_row(const ArithProblem& problem, bool boxed) {
  Json row = Json::object();
  row["input"] = problem.input;
  const std::string& sft = problem.sft_answer.empty() ? problem.label : problem.sft_answer;
  row["label"] = boxed ? problem.scratch + "\\boxed{" + sft + "}" : problem.label;
  return row.dump();
}

}  // namespace vime::quickstart
