#include "support/outside_reader.hpp"

#include <catch2/catch.hpp>

#include "support/test_support.hpp"
#include "vime/ckpt/safetensors.hpp"

namespace vime::test {

std::string outside_reader_missing() {
  static const std::string missing =
      run_command("/usr/bin/python3 -c 'import torch'").exit_code == 0
          ? ""
          : "/usr/bin/python3 cannot import torch (apt-get install python3-torch)";
  return missing;
}

at::Tensor outside_reader_logits(const std::filesystem::path& model_dir,
                                 const std::vector<std::vector<int64_t>>& sequences) {
  TempDir dir;
  std::vector<int64_t> tokens, cu_seqlens{0};
  for (const auto& s : sequences) {
    tokens.insert(tokens.end(), s.begin(), s.end());
    cu_seqlens.push_back(static_cast<int64_t>(tokens.size()));
  }
  const auto in = dir.path() / "tokens.safetensors", out = dir.path() / "logits.safetensors";
  ckpt::write_safetensors(in,
                          {{"tokens", at::tensor(tokens)}, {"cu_seqlens", at::tensor(cu_seqlens)}});
  const auto r = run_command("/usr/bin/python3 " VIME_SOURCE_DIR "/tools/parity/torch_logits.py " +
                             model_dir.string() + " " + in.string() + " " + out.string());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  return ckpt::SafetensorsFile(out).get("logits").clone();  // owns its memory past the file
}

}  // namespace vime::test
