#include "common/regex.hpp"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <stdexcept>

namespace vime::rm {

struct Regex::Impl {
  pcre2_code* code = nullptr;
  uint32_t groups = 0;
};

Regex::Regex(std::string_view pattern, bool ignore_case) : impl_(std::make_unique<Impl>()) {
  int error = 0;
  PCRE2_SIZE offset = 0;
  uint32_t options = PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF;
  if (ignore_case) options |= PCRE2_CASELESS;
  impl_->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(), options,
                              &error, &offset, nullptr);
  if (impl_->code == nullptr) {
    throw std::logic_error("bad grader regex: " + std::string(pattern));
  }
  pcre2_jit_compile(impl_->code, PCRE2_JIT_COMPLETE);
  pcre2_pattern_info(impl_->code, PCRE2_INFO_CAPTURECOUNT, &impl_->groups);
}

Regex::~Regex() {
  if (impl_ && impl_->code) pcre2_code_free(impl_->code);
}

namespace {

struct MatchData {
  explicit MatchData(const pcre2_code* code)
      : data(pcre2_match_data_create_from_pattern(code, nullptr)) {}
  ~MatchData() { pcre2_match_data_free(data); }
  pcre2_match_data* data;
};

// Offsets of the match at or after `start`, or false.
bool match_at(const pcre2_code* code, std::string_view text, size_t start, MatchData& md,
              uint32_t options = 0) {
  int rc = pcre2_match(code, reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(), start, options,
                       md.data, nullptr);
  return rc >= 0;
}

}  // namespace

std::optional<std::vector<std::optional<std::string>>> Regex::search(std::string_view text) const {
  MatchData md(impl_->code);
  if (!match_at(impl_->code, text, 0, md)) return std::nullopt;
  PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md.data);
  std::vector<std::optional<std::string>> groups;
  for (uint32_t g = 0; g <= impl_->groups; ++g) {
    if (ov[2 * g] == PCRE2_UNSET) {
      groups.emplace_back(std::nullopt);
    } else {
      groups.emplace_back(std::string(text.substr(ov[2 * g], ov[2 * g + 1] - ov[2 * g])));
    }
  }
  return groups;
}

std::vector<std::string> Regex::findall(std::string_view text) const {
  std::vector<std::string> out;
  MatchData md(impl_->code);
  size_t pos = 0;
  while (pos <= text.size() && match_at(impl_->code, text, pos, md)) {
    PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md.data);
    uint32_t g = impl_->groups >= 1 ? 1 : 0;
    out.emplace_back(ov[2 * g] == PCRE2_UNSET
                         ? std::string()
                         : std::string(text.substr(ov[2 * g], ov[2 * g + 1] - ov[2 * g])));
    pos = ov[1] > ov[0] ? ov[1] : ov[1] + 1;
  }
  return out;
}

std::string Regex::sub(std::string_view replacement, std::string_view text) const {
  std::string out;
  MatchData md(impl_->code);
  size_t pos = 0, copied = 0;
  while (pos <= text.size() && match_at(impl_->code, text, pos, md)) {
    PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md.data);
    out.append(text.substr(copied, ov[0] - copied));
    for (size_t i = 0; i < replacement.size(); ++i) {
      char c = replacement[i];
      if (c == '\\' && i + 1 < replacement.size() && replacement[i + 1] >= '1' &&
          replacement[i + 1] <= '9') {
        uint32_t g = static_cast<uint32_t>(replacement[++i] - '0');
        if (g <= impl_->groups && ov[2 * g] != PCRE2_UNSET) {
          out.append(text.substr(ov[2 * g], ov[2 * g + 1] - ov[2 * g]));
        }
      } else {
        out.push_back(c);
      }
    }
    copied = ov[1];
    pos = ov[1] > ov[0] ? ov[1] : ov[1] + 1;
  }
  out.append(text.substr(copied < text.size() ? copied : text.size()));
  return out;
}

}  // namespace vime::rm
