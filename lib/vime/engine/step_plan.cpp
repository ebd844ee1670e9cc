#include "vime/engine/step_plan.hpp"

#include "vime/core/byte_codec.hpp"

namespace vime::engine {

std::string StepPlan::encode() const {
  core::ByteWriter w;
  w.put<int32_t>(static_cast<int32_t>(op));
  w.put<int64_t>(epoch);
  w.put<int64_t>(num_blocks);
  w.put<uint8_t>((fixed_shape_decode ? 1 : 0) | (capture_graph ? 2 : 0));
  std::vector<int32_t> flat;
  for (const auto& [from, to] : copies) flat.insert(flat.end(), {from, to});
  w.put_vector(flat);
  w.put<uint64_t>(sequences.size());
  for (const auto& s : sequences) {
    w.put_vector(s.tokens);
    w.put<int64_t>(s.begin);
    w.put<int64_t>(s.end);
    w.put_vector(s.block_table);
    w.put<uint8_t>(s.wants_logits ? 1 : 0);
  }
  return w.take();
}

StepPlan StepPlan::decode(const std::string& bytes) {
  core::ByteReader r(bytes, "tensor-parallel engine: a step plan");
  StepPlan plan;
  const auto op = r.get<int32_t>();
  if (op < 0 || op > static_cast<int32_t>(Op::kStop)) r.fail();
  plan.op = static_cast<Op>(op);
  plan.epoch = r.get<int64_t>();
  plan.num_blocks = r.get<int64_t>();
  const auto flags = r.get<uint8_t>();
  if (flags > 3) r.fail();
  plan.fixed_shape_decode = (flags & 1) != 0;
  plan.capture_graph = (flags & 2) != 0;
  const auto flat = r.get_vector<int32_t>();
  if (flat.size() % 2 != 0) r.fail();
  for (size_t i = 0; i < flat.size(); i += 2) plan.copies.emplace_back(flat[i], flat[i + 1]);
  const auto n = r.get<uint64_t>();
  if (n > bytes.size()) r.fail();
  for (uint64_t i = 0; i < n; ++i) {
    Sequence s;
    s.tokens = r.get_vector<int32_t>();
    s.begin = r.get<int64_t>();
    s.end = r.get<int64_t>();
    s.block_table = r.get_vector<int32_t>();
    s.wants_logits = r.get<uint8_t>() != 0;
    if (s.begin < 0 || s.end < s.begin || static_cast<int64_t>(s.tokens.size()) != s.end - s.begin)
      r.fail();
    plan.sequences.push_back(std::move(s));
  }
  if (!r.at_end()) r.fail();
  return plan;
}

}  // namespace vime::engine
