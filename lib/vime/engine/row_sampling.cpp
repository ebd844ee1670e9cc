#include "vime/engine/row_sampling.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "vime/error.hpp"

namespace vime::engine {
namespace {

[[noreturn]] void bad_field(const std::string& field, const std::string& rule, double value) {
  std::ostringstream message;
  message << "sampling_params." << field << " " << rule << ", got " << value;
  throw Error(message.str());
}

}  // namespace

std::vector<int32_t> RowSampling::finishing_token_ids() const {
  std::vector<int32_t> ids = stop_token_ids;
  if (!ignore_eos) ids.insert(ids.end(), eos_token_ids.begin(), eos_token_ids.end());
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

RowSampling make_row_sampling(const SamplingParams& params, std::vector<int32_t> eos_token_ids,
                              uint64_t fallback_seed) {
  RowSampling row;
  row.temperature = params.temperature;
  row.top_p = params.top_p;
  row.top_k = params.top_k;
  if (const Json* min_p = params.extra.find("min_p"); min_p && !min_p->is_null()) {
    if (!min_p->is_number()) throw Error("sampling_params.min_p must be a number");
    row.min_p = min_p->as_double();
  }
  if (const Json* ignore_eos = params.extra.find("ignore_eos");
      ignore_eos && !ignore_eos->is_null()) {
    if (!ignore_eos->is_bool()) throw Error("sampling_params.ignore_eos must be true or false");
    row.ignore_eos = ignore_eos->as_bool();
  }
  if (!std::isfinite(row.temperature) || row.temperature < 0)
    bad_field("temperature", "must be >= 0 (0 means greedy)", row.temperature);
  if (!(row.top_p > 0 && row.top_p <= 1)) bad_field("top_p", "must be in (0, 1]", row.top_p);
  if (row.top_k < -1) bad_field("top_k", "must be -1 or 0 (off) or positive", double(row.top_k));
  if (!(row.min_p >= 0 && row.min_p <= 1)) bad_field("min_p", "must be in [0, 1]", row.min_p);
  if (params.min_new_tokens < 0)
    bad_field("min_new_tokens", "must be >= 0", double(params.min_new_tokens));
  if (params.max_new_tokens > 0 && params.min_new_tokens > params.max_new_tokens)
    bad_field("min_new_tokens",
              "must not exceed max_new_tokens (" + std::to_string(params.max_new_tokens) + ")",
              double(params.min_new_tokens));
  for (const std::string& s : params.stop)
    if (s.empty()) throw Error("sampling_params.stop holds an empty string; remove it");
  row.seed = params.seed ? static_cast<uint64_t>(*params.seed) : fallback_seed;
  row.min_new_tokens = params.min_new_tokens;
  row.max_new_tokens = params.max_new_tokens;
  row.stop_token_ids = params.stop_token_ids;
  row.eos_token_ids = std::move(eos_token_ids);
  row.stop = params.stop;
  return row;
}

}  // namespace vime::engine
