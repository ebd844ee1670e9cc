// A per-request hook into the NativeEngine's decode loop, for streaming: called on the scheduler
// thread with each sampled token, in order.
#pragma once

#include <cstdint>
#include <functional>

namespace vime::engine {

// `finish_reason` is null while the request runs, "stop" or "length" on the token that ends it.
// Returning false ends a running request with "abort" (its client went away). The hook runs
// inside the batch step, so it must be quick (hand the token to another thread) and not throw.
using TokenCallback =
    std::function<bool(int32_t token_id, float log_prob, const char* finish_reason)>;

}  // namespace vime::engine
