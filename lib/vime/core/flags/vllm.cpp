// vLLM: the vLLM and vllm-router settings vime itself reads (router address and policy, request
// concurrency, determinism, weight transfer, engine layout). Every other --vllm-* and --router-*
// flag is passed through to vLLM / vllm-router verbatim and has no row here.
// slime: slime/utils/arguments.py (SGLang, router); vLLM's: vime/backends/vllm_utils/arguments.py.
#include "vime/core/flags/flag_groups.hpp"

namespace vime::core::flags {
namespace {
using enum FlagKind;
using enum Support;
constexpr FlagSpec kFlags[] = {
    {"--rollout-backend", kString, nullptr,
     "Where rollouts generate: native (vime's in-process engine on the trainer's weights) or vllm "
     "(`vllm serve` engines launched by vime, or --rollout-external-engine-addrs / "
     "--vllm-router-ip). Unset: vllm when any of those or --vllm-config is given, else native.",
     kYes, "native|vllm"},
    {"--vllm-router-ip", kString, nullptr,
     "Address of a running vllm-router to send requests to (unset: vime launches one)."},
    {"--vllm-router-port", kInt, nullptr, "Port of the vllm-router (unset: vime picks one)."},
    {"--router-request-timeout-secs", kInt, "14400",
     "Timeout of one HTTP request to the router, in seconds."},
    {"--vllm-router-policy", kString, "consistent_hash",
     "vllm-router load-balancing policy; consistent_hash keeps a sample's turns on one engine "
     "(x-session-id header).",
     kYes, "random|round_robin|cache_aware|power_of_two|consistent_hash", "router_policy",
     "--router-policy"},
    {"--vllm-server-concurrency", kInt, "512",
     "Requests in flight per engine; the cap is this times the number of engines."},
    {"--vllm-enable-deterministic-inference", kStoreTrue, nullptr,
     "Deterministic sampling: per-sample seed = --rollout-seed + index in group, and "
     "batch-invariant engine kernels (VLLM_BATCH_INVARIANT=1)."},
    {"--vllm-weight-transfer-timeout-sec", kFloat, "900.0",
     "Timeout of the engines' weight-transfer control calls, in seconds."},
    {"--vllm-weight-sync-packed", kBoolOptional, "true",
     "Send dense-model weights to the engines in one packed NCCL transfer (MoE and "
     "compressed-tensors models always go per bucket)."},
    {"--prefill-num-servers", kInt, nullptr,
     "Engines that serve prefill only (prefill/decode disaggregation); the rest decode."},
    {"--vllm-config", kString, nullptr,
     "YAML engine layout: models, server groups (regular|prefill|decode|placeholder|encoder), GPU "
     "counts and per-group overrides. Exclusive with --prefill-num-servers and external engines."},
};
}  // namespace
FlagGroup vllm() { return {"vllm", "vLLM and router", kFlags}; }
}  // namespace vime::core::flags
