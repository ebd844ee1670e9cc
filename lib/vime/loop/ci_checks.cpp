#include "vime/loop/ci_checks.hpp"

#include <cmath>
#include <cstdio>
#include <string>

#include "vime/error.hpp"

namespace vime::loop {
namespace {

constexpr double kExact = 1e-8;

std::string where(int64_t rollout_id, int64_t step_id = -1) {
  std::string s = "--ci-test: rollout " + std::to_string(rollout_id);
  if (step_id >= 0) s += " step " + std::to_string(step_id);
  return s;
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

}  // namespace

void check_rollout_invariants(const CiCheckOptions& ci, int64_t rollout_id,
                              const Metrics& metrics) {
  if (!ci.enabled || rollout_id != 0) return;
  auto actor = metrics.find("rollout/log_probs");
  auto ref = metrics.find("rollout/ref_log_probs");
  if (actor == metrics.end() || ref == metrics.end()) return;
  const double diff = std::abs(actor->second - ref->second);
  if (!(diff < kExact)) {
    throw Error(where(rollout_id) + ": actor log-probs " + number(actor->second) +
                " differ from reference log-probs " + number(ref->second) + " by " + number(diff) +
                " (must be < 1e-8: the actor starts as the reference model)");
  }
}

void check_step_invariants(const CiCheckOptions& ci, int64_t rollout_id, int64_t step_id,
                           const Metrics& metrics) {
  if (!ci.enabled) return;
  auto value = [&](const char* key) -> const double* {
    auto it = metrics.find(key);
    return it == metrics.end() ? nullptr : &it->second;
  };
  if (step_id == 0 && ci.check_kl) {
    if (const double* kl = value("train/ppo_kl"); kl != nullptr && !(std::abs(*kl) < kExact)) {
      throw Error(where(rollout_id, step_id) + ": train/ppo_kl is " + number(*kl) +
                  " (must be < 1e-8 on the first step of a rollout)");
    }
    if (const double* kl = value("train/kl_loss");
        rollout_id == 0 && kl != nullptr && !(std::abs(*kl) < kExact)) {
      throw Error(where(rollout_id, step_id) + ": train/kl_loss is " + number(*kl) +
                  " (must be < 1e-8 while the actor equals the reference)");
    }
  }
  const double threshold = ci.train_rollout_logprob_abs_diff_threshold;
  if (const double* diff = value("train/train_rollout_logprob_abs_diff");
      diff != nullptr && !(*diff <= threshold)) {
    throw Error(where(rollout_id, step_id) + ": train/train_rollout_logprob_abs_diff is " +
                number(*diff) + ", above --ci-train-rollout-logprob-abs-diff-threshold " +
                number(threshold));
  }
}

}  // namespace vime::loop
