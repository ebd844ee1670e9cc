#include "vime/engine/generation_config.hpp"

#include <catch2/catch.hpp>

#include "support/test_support.hpp"
#include "vime/error.hpp"

TEST_CASE("EOS ids come from generation_config.json, else config.json", "[engine]") {
  vime::test::TempDir dir;
  CHECK(vime::engine::eos_token_ids_from_hf_dir(dir.path()).empty());
  dir.write("config.json", R"({"eos_token_id": 151643})");
  CHECK(vime::engine::eos_token_ids_from_hf_dir(dir.path()) == std::vector<int32_t>{151643});
  dir.write("generation_config.json", R"({"eos_token_id": [151645, 151643]})");
  CHECK(vime::engine::eos_token_ids_from_hf_dir(dir.path()) ==
        std::vector<int32_t>{151645, 151643});
  dir.write("generation_config.json", R"({"eos_token_id": "x"})");
  CHECK_THROWS_AS(vime::engine::eos_token_ids_from_hf_dir(dir.path()), vime::Error);
}
