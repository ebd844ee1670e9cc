// The embedded rollout backend (NativeEngine on the trainer's Model). With several ranks, every
// rank's NativeEngine generates on its own GPU from its own parameter replica: ranks > 0 serve
// theirs over vLLM's HTTP API (rank_engines.hpp) and rank 0's engine() spreads the rollout over
// its own engine and theirs (engine::EngineBalancer: GRPO groups whole on one rank, balanced by
// requests in flight). A weight update stays a version bump on every rank.
#pragma once

#include "vime/loop/rollout_backend.hpp"

namespace vime::dist {
class ProcessGroup;
}

namespace vime::loop {

// Called on every rank with the same arguments but its own `model` (`tokenizer` is required with
// several ranks). `group` null or of size 1: one engine, as before. Rank 0: engine() is the fleet;
// it waits (the store's timeout) for every other rank to publish its engine. Ranks > 0: the server
// runs until the backend is destroyed and engine() throws (rank 0 drives generation); they
// still call before_train() and update_weights() like rank 0.
std::unique_ptr<RolloutBackend> make_native_backend(const Args& args, Model& model,
                                                    const Tokenizer* tokenizer, int64_t version,
                                                    dist::ProcessGroup* group = nullptr);

}  // namespace vime::loop
