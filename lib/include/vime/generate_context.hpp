// What a custom generate plugin gets besides its sample: the run's args, the engine, the tokenizer.
#pragma once

#include <cstdint>
#include <optional>

namespace vime {

class Args;
class EngineClient;
class Tokenizer;

struct GenerateContext {
  const Args& args;
  EngineClient& engine;
  const Tokenizer& tokenizer;
  bool evaluation = false;
  std::optional<int64_t> rollout_id;
};

}  // namespace vime
