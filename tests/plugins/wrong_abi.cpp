// A plugin as an older or newer vime would have built it: same symbols, another ABI number.
#include <cstdint>

extern "C" struct vime_plugin_export {
  uint32_t abi;
  uint32_t kind;
  const char* name;
  const void* fn;
};

static int reward_stub() { return 0; }
static const vime_plugin_export kExport = {999u, 4u, "old_reward",
                                           reinterpret_cast<const void*>(&reward_stub)};
static const vime_plugin_export* const kExports[] = {&kExport};

extern "C" __attribute__((visibility("default"))) uint32_t vime_plugin_abi() { return 999u; }
extern "C" __attribute__((visibility("default"))) const vime_plugin_export* const*
vime_plugin_exports(uint32_t* count) {
  *count = 1;
  return kExports;
}
