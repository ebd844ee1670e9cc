// --rm-type random: 0 or 1 with equal probability (slime: random.randint(0, 1)); for plumbing
// tests.
#include <random>
#include <vime/hooks.hpp>

namespace {

vime::Json reward(const vime::Args& /*args*/, const vime::Sample& /*sample*/) {
  thread_local std::mt19937 rng{std::random_device{}()};
  return static_cast<int>(std::uniform_int_distribution<int>(0, 1)(rng));
}

}  // namespace

VIME_REWARD_PLUGIN(reward)
