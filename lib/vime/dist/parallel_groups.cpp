#include "vime/dist/parallel_groups.hpp"

#include <string>
#include <vector>

#include "vime/error.hpp"

namespace vime::dist {

ParallelGroups make_parallel_groups(ProcessGroup* world, int tp_size) {
  ParallelGroups g;
  g.world = world;
  const int size = world != nullptr ? world->size() : 1;
  const int rank = world != nullptr ? world->rank() : 0;
  if (tp_size < 1 || size % tp_size != 0) {
    throw UsageError("--tensor-model-parallel-size " + std::to_string(tp_size) +
                     " does not divide the " + std::to_string(size) +
                     " trainer ranks; give a divisor of the world size");
  }
  g.tp_size = tp_size;
  g.tp_rank = rank % tp_size;
  g.dp_rank = rank / tp_size;
  if (tp_size == 1) return g;
  std::vector<int> tp_ranks, dp_ranks;
  for (int r = 0; r < tp_size; ++r) tp_ranks.push_back(g.dp_rank * tp_size + r);
  for (int r = g.tp_rank; r < size; r += tp_size) dp_ranks.push_back(r);
  g.tp = world->new_group(tp_ranks, "tp" + std::to_string(g.dp_rank));
  g.dp = world->new_group(dp_ranks, "dp" + std::to_string(g.tp_rank));
  return g;
}

}  // namespace vime::dist
