// The embedded rollout backend (NativeEngine on the trainer's Model).
#pragma once

#include "vime/loop/rollout_backend.hpp"

namespace vime::loop {

std::unique_ptr<RolloutBackend> make_native_backend(const Args& args, Model& model,
                                                    const Tokenizer* tokenizer, int64_t version);

}  // namespace vime::loop
