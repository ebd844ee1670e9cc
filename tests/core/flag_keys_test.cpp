// Every flag key the library and the CLI read or write by name must be a registered flag's dest: a
// misspelt key would otherwise fail only when its code path runs (or, behind has(), never). Scans
// lib/ and apps/ for string-literal keys passed to Args' accessors (`args.get_int("key")`,
// `ctx.args.is_set("key")`) and to helpers that take the args first (`flag_on(args, "key")`).
// plugins/, rm_hub/ and tests/ are not scanned: plugins read free-form --custom-config-path keys.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "vime/core/flag_registry.hpp"
#include "vime/core/flags/command_flags.hpp"

namespace {

namespace fs = std::filesystem;

// Keys that are no flag's dest by design, each with why.
const std::map<std::string, std::string>& non_flag_keys() {
  static const std::string kMisKey =
      "slime's MIS example (mis.yaml): a --custom-config-path key the built-in mis TIS reads";
  static const std::string kVllmPassthrough =
      "vLLM's own flag, passed through to vllm serve as --vllm-*; the embedded engine reads it "
      "by name for the same meaning";
  static const std::map<std::string, std::string> keys = {
      {"chat_template_suffix_to_remove",
       "slime's eval dataset field; only a --custom-config-path file sets it"},
      {"eval_custom_rm_path",
       "slime's eval dataset field; only a --custom-config-path file sets it"},
      {"use_critic", "derived by validate_args (--advantage-estimator ppo), as slime does"},
      {"vllm_model_urls", "derived by vime train for plugins (slime's args.vllm_model_urls)"},
      {"tokenizer_path", "the tokenizer's directory, from a --custom-config-path file only"},
      {"rs_level", kMisKey},
      {"rs_lower_bound", kMisKey},
      {"rs_upper_bound", kMisKey},
      {"rs_veto_threshold", kMisKey},
      {"tis_batch_normalize", kMisKey},
      {"tis_level", kMisKey},
      {"tis_lower_bound", kMisKey},
      {"tis_mode", kMisKey},
      {"tis_upper_bound", kMisKey},
      {"use_rs", kMisKey},
      {"--vllm-gpu-memory-utilization", kVllmPassthrough},
      {"--vllm-max-num-batched-tokens", kVllmPassthrough},
      {"--vllm-block-size", kVllmPassthrough},
      {"--vllm-enforce-eager", kVllmPassthrough},
  };
  return keys;
}

struct KeyUse {
  std::string where;  // path:line
  std::string key;
};

// Args' accessors on a receiver named like an Args (`args`, `args_`, `a`, `rollout_args`), and
// helpers called with such a receiver first.
const std::regex& accessor_call() {
  static const std::regex re(
      R"re(\b(a|args_?|[A-Za-z0-9_]+_args_?)\s*(?:\.|->)\s*)re"
      R"re((get_bool|get_int|get_double|get_string|get_string_list|get_int_list|)re"
      R"re(get_optional_int|get_optional_double|get_optional_string|get|is_set|has|source|)re"
      R"re(flag_name|set)\s*\(\s*"([^"\\]*)")re");
  return re;
}
const std::regex& helper_call() {
  static const std::regex re(
      // template arguments allowed: load_hook_if_set<PluginKind::kLoss>(args, "key")
      R"re(\b[A-Za-z_][A-Za-z0-9_]*\s*(?:<[^<>;(){}]*>)?\s*)re"
      R"re(\(\s*(a|args_?|[A-Za-z0-9_]+_args_?)\s*,\s*"([^"\\]*)")re");
  return re;
}

int line_of(const std::string& text, size_t offset) {
  return 1 + static_cast<int>(
                 std::count(text.begin(), text.begin() + static_cast<ptrdiff_t>(offset), '\n'));
}

std::vector<KeyUse> key_uses(const fs::path& root, const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  std::vector<KeyUse> out;
  const std::string where = fs::relative(file, root).string() + ":";
  for (auto it = std::sregex_iterator(text.begin(), text.end(), accessor_call());
       it != std::sregex_iterator(); ++it)
    out.push_back({where + std::to_string(line_of(text, static_cast<size_t>(it->position()))),
                   (*it)[3].str()});
  for (auto it = std::sregex_iterator(text.begin(), text.end(), helper_call());
       it != std::sregex_iterator(); ++it)
    out.push_back({where + std::to_string(line_of(text, static_cast<size_t>(it->position()))),
                   (*it)[2].str()});
  return out;
}

}  // namespace

TEST_CASE("every flag key read by name in lib/ and apps/ is a registered flag", "[flag_keys]") {
  std::set<std::string> dests;
  std::vector<const vime::core::FlagRegistry*> registries = {&vime::core::FlagRegistry::instance()};
  for (const auto* r : vime::core::flags::command_registries()) registries.push_back(r);
  for (const auto* registry : registries)
    for (const auto& group : registry->groups())
      for (const auto& spec : group.flags) dests.insert(vime::core::dest_of(spec));
  for (const auto& [key, why] : non_flag_keys()) {
    INFO(key << " is listed as no flag (" << why << ")");
    CHECK(dests.count(key) == 0);  // a listed key that became a flag: drop it from the list
  }

  const fs::path root = VIME_SOURCE_DIR;
  size_t files = 0, uses = 0;
  std::set<std::string> allowed_seen;
  for (const char* dir : {"lib", "apps"}) {
    for (const auto& entry : fs::recursive_directory_iterator(root / dir)) {
      const auto ext = entry.path().extension();
      if (!entry.is_regular_file() || (ext != ".cpp" && ext != ".hpp")) continue;
      ++files;
      for (const KeyUse& use : key_uses(root, entry.path())) {
        ++uses;
        if (dests.count(use.key) != 0) continue;
        if (non_flag_keys().count(use.key) != 0) {
          allowed_seen.insert(use.key);
          continue;
        }
        FAIL_CHECK(use.where << ": '" << use.key
                             << "' is no registered flag's dest (misspelt? else list it in "
                                "non_flag_keys() with the reason)");
      }
    }
  }
  CHECK(files > 100);
  CHECK(uses > 200);
  for (const auto& [key, why] : non_flag_keys()) {
    INFO(key << " is listed in non_flag_keys() but read nowhere: drop it");
    CHECK(allowed_seen.count(key) == 1);
  }
}

// A flag vime marks supported (Support::kYes) must be read by the code that runs: a key that only
// the flag tables, the parser and arg_validation name is accepted and then ignored, and a ported
// slime script silently runs another experiment. Such a flag is either implemented or marked
// kNotYet (refused by name) / kNoEffect (accepted, nothing in vime it would change) in its table.
// Scans every C++ source of lib/, apps/, plugins/, rm_hub/ and filter_hub/ outside the flag
// machinery for Args reads of each kYes flag's dest.
namespace {

// A key passed first to a local lambda or helper that reads the Args it captured
// (`need("hidden_size")`, `check("num_layers", n)`); no method call (`json->contains("key")`).
const std::regex& bare_key_call() {
  static const std::regex re(R"re((?:^|[^.>\w])[a-z_][a-z0-9_]*\s*\(\s*"([a-z0-9_]+)"\s*[,)])re");
  return re;
}

// Files that declare, parse, print or validate flags: reading a key there is no honouring.
bool is_flag_machinery(const std::string& rel) {
  return rel.starts_with("lib/vime/core/flags/") || rel == "lib/vime/core/arg_validation.cpp" ||
         rel == "lib/vime/core/arg_parser.cpp" || rel == "lib/vime/core/flag_registry.cpp" ||
         rel == "lib/vime/core/config_dump.cpp" || rel == "lib/vime/core/help.cpp";
}

// Supported flags that take effect through arg_validation alone, each with how: a value derived
// from them that the code reads, or a refusal of every value vime would build differently.
const std::map<std::string, std::string>& read_indirectly() {
  static const std::map<std::string, std::string> keys = {
      {"config", "arg_parser.cpp reads the YAML file into the Args"},
      {"custom_config_path", "arg_parser.cpp reads the YAML file's keys into the Args"},
      {"offload", "derives offload_train and offload_rollout"},
      {"num_steps_per_rollout", "derives global_batch_size"},
      {"update_weight_delta_dir", "derives update_weight_disk_dir (its deprecated spelling)"},
      {"debug_train_only",
       "derived from load_debug_rollout_data, and refused without it: the loop then replays the "
       "saved rollouts"},
      {"swiglu", "check_model_support refuses a model without it (GELU MLP)"},
      {"normalization", "check_model_support refuses anything but RMSNorm"},
      {"rope_type", "check_model_support refuses anything but rope"},
      {"position_embedding_type", "check_model_support refuses anything but rope"},
      {"use_rotary_position_embeddings", "check_model_support refuses a model without it"},
  };
  return keys;
}

// Supported flags that another branch of the same work is implementing right now: the
// test names them here until that branch lands; the check below fails once they are read, so the
// entry cannot outlive its reason.
const std::map<std::string, std::string>& implemented_elsewhere() {
  static const std::map<std::string, std::string> keys = {};
  return keys;
}

}  // namespace

TEST_CASE("every supported train flag is read outside parsing and validation", "[flag_use]") {
  const fs::path root = VIME_SOURCE_DIR;
  std::set<std::string> read;
  size_t files = 0;
  for (const char* dir : {"lib", "apps", "plugins", "rm_hub", "filter_hub"}) {
    for (const auto& entry : fs::recursive_directory_iterator(root / dir)) {
      const auto ext = entry.path().extension();
      if (!entry.is_regular_file() || (ext != ".cpp" && ext != ".hpp")) continue;
      if (is_flag_machinery(fs::relative(entry.path(), root).string())) continue;
      ++files;
      for (const KeyUse& use : key_uses(root, entry.path())) read.insert(use.key);
      std::ifstream in(entry.path(), std::ios::binary);
      const std::string text((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
      for (auto it = std::sregex_iterator(text.begin(), text.end(), bare_key_call());
           it != std::sregex_iterator(); ++it)
        read.insert((*it)[1].str());
    }
  }
  CHECK(files > 100);
  std::set<std::string> ignored;
  for (const auto& group : vime::core::FlagRegistry::instance().groups()) {
    for (const auto& spec : group.flags) {
      if (spec.support != vime::core::Support::kYes) continue;
      const std::string dest = vime::core::dest_of(spec);
      if (read.count(dest) != 0) {
        INFO(dest << " is listed as read indirectly or elsewhere, but the scan sees it read: drop "
                     "it from the list");
        CHECK(read_indirectly().count(dest) + implemented_elsewhere().count(dest) == 0);
        continue;
      }
      if (read_indirectly().count(dest) + implemented_elsewhere().count(dest) != 0) continue;
      ignored.insert(std::string(spec.name));
    }
  }
  std::string names;
  for (const auto& n : ignored) names += " " + n;
  INFO("supported but read by nothing (implement, or mark kNotYet / kNoEffect):" << names);
  CHECK(ignored.empty());
}
