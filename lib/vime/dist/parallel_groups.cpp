#include "vime/dist/parallel_groups.hpp"

#include <string>
#include <vector>

#include "vime/error.hpp"

namespace vime::dist {

ParallelGroups make_parallel_groups(ProcessGroup* world, int tp_size, int cp_size) {
  ParallelGroups g;
  g.world = world;
  const int size = world != nullptr ? world->size() : 1;
  const int rank = world != nullptr ? world->rank() : 0;
  if (tp_size < 1 || size % tp_size != 0) {
    throw UsageError("--tensor-model-parallel-size " + std::to_string(tp_size) +
                     " does not divide the " + std::to_string(size) +
                     " trainer ranks; give a divisor of the world size");
  }
  if (cp_size < 1 || size % (tp_size * cp_size) != 0) {
    throw UsageError("--context-parallel-size " + std::to_string(cp_size) + " x " +
                     "--tensor-model-parallel-size " + std::to_string(tp_size) +
                     " does not divide the " + std::to_string(size) +
                     " trainer ranks; give sizes whose product divides the world size");
  }
  const int model = tp_size * cp_size;  // ranks of one model replica
  g.tp_size = tp_size;
  g.cp_size = cp_size;
  g.tp_rank = rank % tp_size;
  g.cp_rank = (rank / tp_size) % cp_size;
  g.dp_rank = rank / model;
  if (model == 1) return g;
  auto global = [&](int dp, int cp, int tp) { return (dp * cp_size + cp) * tp_size + tp; };
  const std::string cp_tag = std::to_string(g.cp_rank), tp_tag = std::to_string(g.tp_rank),
                    dp_tag = std::to_string(g.dp_rank);
  // Every rank makes its groups in this order (tp, cp, dp, dp x cp).
  if (tp_size > 1) {
    std::vector<int> ranks;
    for (int t = 0; t < tp_size; ++t) ranks.push_back(global(g.dp_rank, g.cp_rank, t));
    g.tp = world->new_group(ranks, "tp" + dp_tag + "." + cp_tag);
  }
  if (cp_size > 1) {
    std::vector<int> ranks;
    for (int c = 0; c < cp_size; ++c) ranks.push_back(global(g.dp_rank, c, g.tp_rank));
    g.cp = world->new_group(ranks, "cp" + dp_tag + "." + tp_tag);
  }
  std::vector<int> dp_ranks;
  for (int d = 0; d < size / model; ++d) dp_ranks.push_back(global(d, g.cp_rank, g.tp_rank));
  g.dp = world->new_group(dp_ranks, "dp" + cp_tag + "." + tp_tag);
  if (cp_size > 1 && tp_size > 1) {
    std::vector<int> ranks;  // ascending: dp-major, then cp
    for (int d = 0; d < size / model; ++d)
      for (int c = 0; c < cp_size; ++c) ranks.push_back(global(d, c, g.tp_rank));
    g.dp_cp = world->new_group(ranks, "dpcp" + tp_tag);
  }
  return g;
}

}  // namespace vime::dist
