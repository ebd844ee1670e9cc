// `vime logprobs` on tiny models (Qwen2, GLM-4, GLM-4.5): its log-probs and entropies match the
// reference logits of tools/parity/make_tiny_goldens.py; bad input gives one clear error.
#include <ATen/ATen.h>

#include <catch2/catch.hpp>

#include "support/test_support.hpp"
#include "vime/ckpt/safetensors.hpp"
#include "vime/core/atomic_file.hpp"
#include "vime/json.hpp"

using vime::test::run_vime;

TEST_CASE("vime logprobs scores response tokens as the reference logits say", "[model]") {
  for (const char* name : {"tiny_qwen2", "tiny_glm4", "tiny_glm4_moe"}) {
    CAPTURE(name);
    const std::string model = std::string(VIME_SOURCE_DIR "/tests/model/golden/") + name;
    vime::ckpt::SafetensorsFile golden(model + "/logits.safetensors");
    auto logits = golden.get("logits").to(at::kDouble);  // rows 5..13: the 9-token sequence
    vime::test::TempDir dir;
    auto in = dir.write("in.jsonl",
                        "{\"tokens\": [1, 5, 9, 17, 33], \"response_length\": 2, \"id\": \"a\"}\n"
                        "\n"
                        "{\"tokens\": [2, 4, 8, 16, 32, 64, 95, 3, 7], \"response_length\": 4}\n");
    auto out = dir.path() / "out.jsonl";
    auto r = run_vime("logprobs --hf-checkpoint " + model + " --input " + in.string() +
                      " --output " + out.string() + " --temperature 0.8 --device cpu");
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    auto text = vime::read_text_file(out);
    REQUIRE(vime::test::count_lines(text) == 2);
    auto second = vime::Json::parse(text.substr(text.find('\n') + 1));
    auto first = vime::Json::parse(text.substr(0, text.find('\n')));
    CHECK(first.at("id").as_string() == "a");
    REQUIRE(first.at("log_probs").size() == 2);
    REQUIRE(second.at("log_probs").size() == 4);
    REQUIRE(second.at("entropy").size() == 4);
    const std::vector<int64_t> seq{2, 4, 8, 16, 32, 64, 95, 3, 7};
    for (int i = 0; i < 4; ++i) {
      const int t = 5 + i;  // token index in the sequence
      auto z = logits[5 + t - 1] / 0.8;
      auto log_p = at::log_softmax(z, -1);
      CHECK(second.at("log_probs").at(i).as_double() ==
            Approx(log_p[seq[t]].item<double>()).margin(1e-4));
      CHECK(second.at("entropy").at(i).as_double() ==
            Approx(-(log_p.exp() * log_p).sum().item<double>()).margin(1e-4));
    }
  }
}

TEST_CASE("vime logprobs: bad lines and flags", "[model]") {
  const std::string model = VIME_SOURCE_DIR "/tests/model/golden/tiny_qwen3";
  vime::test::TempDir dir;
  auto out = (dir.path() / "out.jsonl").string();
  auto bad_json = dir.write("a.jsonl", "{\"tokens\": [1, 2], \"response_length\": 1}\n{oops\n");
  auto r = run_vime("logprobs --hf-checkpoint " + model + " --input " + bad_json.string() +
                    " --output " + out + " --device cpu");
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains("a.jsonl:2"));
  CHECK_FALSE(std::filesystem::exists(out));
  auto long_response = dir.write("b.jsonl", "{\"tokens\": [1, 2], \"response_length\": 2}\n");
  r = run_vime("logprobs --hf-checkpoint " + model + " --input " + long_response.string() +
               " --output " + out + " --device cpu");
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains("b.jsonl:1") && Catch::Contains("response_length 2"));
  auto big_token = dir.write("c.jsonl", "{\"tokens\": [1, 960], \"response_length\": 1}\n");
  r = run_vime("logprobs --hf-checkpoint " + model + " --input " + big_token.string() +
               " --output " + out + " --device cpu");
  CHECK_THAT(r.output, Catch::Contains("c.jsonl:1") && Catch::Contains("vocabulary size 96"));
  r = run_vime("logprobs --input x --output y");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("--hf-checkpoint"));
}
