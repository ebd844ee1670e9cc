#include "math/boxed.hpp"

namespace vime::rm {

std::optional<std::string> last_boxed_only_string(std::string_view text) {
  size_t idx = text.rfind("\\boxed");
  if (idx == std::string_view::npos) {
    idx = text.rfind("\\fbox");
    if (idx == std::string_view::npos) return std::nullopt;
  }
  int open = 0;
  for (size_t i = idx; i < text.size(); ++i) {
    if (text[i] == '{') ++open;
    if (text[i] == '}') {
      --open;
      if (open == 0) return std::string(text.substr(idx, i + 1 - idx));
    }
  }
  return std::nullopt;
}

std::optional<std::string> remove_boxed(const std::optional<std::string>& boxed) {
  static constexpr std::string_view kLeft = "\\boxed{";
  if (!boxed || !boxed->starts_with(kLeft) || boxed->empty() || boxed->back() != '}') {
    return std::nullopt;
  }
  // "\boxed{" itself ends in '{', so the shortest accepted string is "\boxed{}".
  if (boxed->size() < kLeft.size() + 1) return std::nullopt;
  return boxed->substr(kLeft.size(), boxed->size() - kLeft.size() - 1);
}

std::optional<std::string> extract_boxed_answer(std::string_view text) {
  if (text.find("\\boxed") == std::string_view::npos) return std::nullopt;
  return remove_boxed(last_boxed_only_string(text));
}

}  // namespace vime::rm
