// The paged KV cache's bookkeeping: allocation, reference counts, prefix matches over full and
// partial blocks, copy-on-write, blocks that wait for the step computing them, eviction order,
// growth and reset.
#include "vime/engine/block_manager.hpp"

#include <catch2/catch.hpp>
#include <numeric>

using vime::engine::BlockCopy;
using vime::engine::BlockManager;

namespace {

std::vector<int32_t> iota_tokens(int n, int first = 100) {
  std::vector<int32_t> t(n);
  std::iota(t.begin(), t.end(), first);
  return t;
}

// What the engine does for a sequence that computes positions [begin, end) in one step.
void compute(BlockManager& m, const std::vector<int32_t>& tokens, std::vector<int32_t>& table,
             int64_t begin, int64_t end, int64_t prompt_length, std::vector<BlockCopy>& copies) {
  REQUIRE(m.make_writable(table, begin, end, copies));
  m.publish_full(tokens, table, begin, end);
  m.mark_computed(tokens, table, begin, end, prompt_length);
}

}  // namespace

TEST_CASE("blocks are allocated per block_size positions and freed with their table", "[engine]") {
  BlockManager m(4, 8, 8);
  CHECK(m.free_blocks() == 8);
  std::vector<int32_t> a, b;
  std::vector<BlockCopy> copies;
  REQUIRE(m.make_writable(a, 0, 9, copies));  // 9 positions: 3 blocks
  CHECK(a.size() == 3);
  REQUIRE(m.make_writable(a, 9, 12, copies));  // fills the third block: no new one
  CHECK(a.size() == 3);
  REQUIRE(m.make_writable(b, 0, 20, copies));
  CHECK(b.size() == 5);
  CHECK(m.free_blocks() == 0);
  std::vector<int32_t> c;
  CHECK_FALSE(m.make_writable(c, 0, 1, copies));  // nothing left: refused, nothing changed
  CHECK(c.empty());
  m.release(a);
  CHECK(a.empty());
  CHECK(m.free_blocks() == 3);
  CHECK(m.make_writable(c, 0, 12, copies));
  CHECK(copies.empty());
}

TEST_CASE("a shared prompt is matched block by block, then partially, and copied on write",
          "[engine]") {
  BlockManager m(4, 32, 32);
  const auto prompt = iota_tokens(10);  // blocks [0,4) [4,8) full, [8,10) partial
  std::vector<int32_t> owner;
  std::vector<BlockCopy> copies;
  compute(m, prompt, owner, 0, 10, 10, copies);
  CHECK(copies.empty());

  // The same prompt: everything is found (two full blocks and the partial one).
  std::vector<int32_t> sharer;
  auto matched = m.match_prefix(prompt, sharer);
  REQUIRE(matched);
  CHECK(*matched == 10);
  CHECK(sharer == owner);
  CHECK(m.used_blocks() == 3);
  // The sharer recomputes its last prompt token: the partial block is copied first.
  REQUIRE(m.make_writable(sharer, 9, 10, copies));
  REQUIRE(copies.size() == 1);
  CHECK(copies[0].from == owner[2]);
  CHECK(copies[0].to == sharer[2]);
  CHECK(sharer[0] == owner[0]);
  CHECK(sharer[1] == owner[1]);
  CHECK(sharer[2] != owner[2]);
  CHECK(m.copies_made() == 1);
  // The owner now holds its partial block alone and writes in place.
  copies.clear();
  REQUIRE(m.make_writable(owner, 10, 11, copies));
  CHECK(copies.empty());

  // A prompt that differs inside the second block shares only the first one.
  auto other = prompt;
  other[6] = 7;
  std::vector<int32_t> third;
  matched = m.match_prefix(other, third);
  REQUIRE(matched);
  CHECK(*matched == 4);
  REQUIRE(third.size() == 1);
  CHECK(third[0] == owner[0]);

  // A longer prompt with the same first 10 tokens takes the partial block too.
  auto longer = iota_tokens(10);
  longer.push_back(5);
  longer.push_back(6);
  std::vector<int32_t> fourth;
  matched = m.match_prefix(longer, fourth);
  REQUIRE(matched);
  CHECK(*matched == 10);
}

TEST_CASE("a block still being computed makes a match wait for the step", "[engine]") {
  BlockManager m(4, 16, 16);
  const auto prompt = iota_tokens(8);
  std::vector<int32_t> owner;
  std::vector<BlockCopy> copies;
  REQUIRE(m.make_writable(owner, 0, 8, copies));
  m.publish_full(prompt, owner, 0, 8);  // scheduled, not computed yet
  std::vector<int32_t> sharer;
  CHECK_FALSE(m.match_prefix(prompt, sharer).has_value());
  CHECK(sharer.empty());
  m.mark_computed(prompt, owner, 0, 8, 8);
  auto matched = m.match_prefix(prompt, sharer);
  REQUIRE(matched);
  CHECK(*matched == 8);
}

TEST_CASE("released blocks stay matchable until reused, least recently released first",
          "[engine]") {
  BlockManager m(4, 4, 4);
  std::vector<BlockCopy> copies;
  const auto a_tokens = iota_tokens(8, 1000), b_tokens = iota_tokens(8, 2000);
  std::vector<int32_t> a, b;
  compute(m, a_tokens, a, 0, 8, 8, copies);
  compute(m, b_tokens, b, 0, 8, 8, copies);
  m.release(a);
  m.release(b);
  CHECK(m.free_blocks() == 4);
  std::vector<int32_t> again;
  REQUIRE(m.match_prefix(a_tokens, again) == std::optional<int64_t>(8));  // still cached
  m.release(again);
  // Two new blocks evict b's (released before a's second release), a's stay.
  std::vector<int32_t> fresh;
  REQUIRE(m.make_writable(fresh, 0, 8, copies));
  std::vector<int32_t> probe_a, probe_b;
  CHECK(m.match_prefix(a_tokens, probe_a) == std::optional<int64_t>(8));
  CHECK(m.match_prefix(b_tokens, probe_b) == std::optional<int64_t>(0));
  m.reset_prefix_cache();
  std::vector<int32_t> after_reset;
  m.release(probe_a);
  CHECK(m.match_prefix(a_tokens, after_reset) == std::optional<int64_t>(0));
}

TEST_CASE("the block pool grows on demand up to its limit", "[engine]") {
  BlockManager m(2, 10, 2);
  CHECK(m.num_blocks() == 2);
  std::vector<int32_t> a;
  std::vector<BlockCopy> copies;
  REQUIRE(m.make_writable(a, 0, 10, copies));  // 5 blocks
  CHECK(m.num_blocks() >= 5);
  REQUIRE(m.make_writable(a, 10, 20, copies));
  CHECK(m.num_blocks() == 10);
  CHECK_FALSE(m.make_writable(a, 20, 21, copies));
  m.reset();
  CHECK(m.free_blocks() == m.num_blocks());
}

TEST_CASE("writing into a published block in place unpublishes it", "[engine]") {
  BlockManager m(4, 8, 8);
  std::vector<BlockCopy> copies;
  const auto tokens = iota_tokens(4);
  std::vector<int32_t> a;
  compute(m, tokens, a, 0, 4, 4, copies);
  m.release(a);
  std::vector<int32_t> b;
  REQUIRE(m.match_prefix(tokens, b) == std::optional<int64_t>(4));
  // b alone holds the block and rewrites its last position (the engine's last-token recompute):
  // in place, and published again once computed.
  REQUIRE(m.make_writable(b, 3, 4, copies));
  CHECK(copies.empty());
  std::vector<int32_t> c;
  CHECK(m.match_prefix(tokens, c) == std::optional<int64_t>(0));
  m.publish_full(tokens, b, 3, 4);
  m.mark_computed(tokens, b, 3, 4, 4);
  CHECK(m.match_prefix(tokens, c) == std::optional<int64_t>(4));
}
