// slime's --ci-test invariants (slime's train.py and loss.py --ci-test asserts), asserted while the
// run goes: they hold for any model, so a failure means the trainer and the rollout disagree on the
// numbers.
//   rollout 0:      |rollout/log_probs - rollout/ref_log_probs| < 1e-8 (the actor starts as the
//   ref) each step 0:    train/ppo_kl < 1e-8 (on-policy: old and new policy are the same weights),
//                   and at rollout 0 train/kl_loss < 1e-8 (unless --ci-disable-kl-checker)
//   every step:     train/train_rollout_logprob_abs_diff <=
//   --ci-train-rollout-logprob-abs-diff-threshold
// slime's model-specific bounds (-1 < log_probs < 0, 0 < entropy < 1) are left out: a tiny or
// untrained model breaks them without anything being wrong.
#pragma once

#include <cstdint>

#include "vime/loop/train_loop_options.hpp"
#include "vime/rollout_types.hpp"

namespace vime::loop {

// Throws vime::Error naming the invariant, the rollout/step and the values. No-op without
// --ci-test.
void check_rollout_invariants(const CiCheckOptions& ci, int64_t rollout_id,
                              const Metrics& rollout_metrics);
void check_step_invariants(const CiCheckOptions& ci, int64_t rollout_id, int64_t step_id,
                           const Metrics& step_metrics);

}  // namespace vime::loop
