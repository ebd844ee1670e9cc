#define PCRE2_CODE_UNIT_WIDTH 8
#include "vime/regex.hpp"

#include <pcre2.h>

#include <algorithm>
#include <cstdint>

#include "vime/error.hpp"

namespace vime {

struct Regex::Code {
  pcre2_code* code = nullptr;
  bool jit = false;
  uint32_t groups = 0;
  ~Code() { pcre2_code_free(code); }
};

namespace {

// Per-thread matching state shared by all patterns: one ovector pair is all a split needs, and a
// JIT stack large enough for long whitespace runs.
struct MatchState {
  pcre2_match_data* data = pcre2_match_data_create(1, nullptr);
  pcre2_jit_stack* stack = pcre2_jit_stack_create(32 * 1024, 4 * 1024 * 1024, nullptr);
  pcre2_match_context* context = pcre2_match_context_create(nullptr);
  MatchState() { pcre2_jit_stack_assign(context, nullptr, stack); }
  ~MatchState() {
    pcre2_match_context_free(context);
    pcre2_jit_stack_free(stack);
    pcre2_match_data_free(data);
  }
};

MatchState& match_state() {
  thread_local MatchState state;
  return state;
}

std::string pcre2_message(int code) {
  PCRE2_UCHAR message[256];
  pcre2_get_error_message(code, message, sizeof(message));
  return reinterpret_cast<const char*>(message);
}

// pcre2_match's result for the match at or after `from`.
int match(const pcre2_code* code, bool jit, std::string_view text, size_t from,
          pcre2_match_data* data, pcre2_match_context* context) {
  const auto subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  return jit ? pcre2_jit_match(code, subject, text.size(), from, 0, data, context)
             : pcre2_match(code, subject, text.size(), from, PCRE2_NO_UTF_CHECK, data, context);
}

}  // namespace

Regex::Regex(std::string_view pattern, RegexOptions options)
    : pattern_(pattern), code_(std::make_unique<Code>()) {
  uint32_t flags = PCRE2_UTF | PCRE2_UCP;
  if (options.ignore_case) flags |= PCRE2_CASELESS;
  if (!options.assume_valid_utf8) flags |= PCRE2_MATCH_INVALID_UTF;
  int error = 0;
  PCRE2_SIZE offset = 0;
  code_->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern_.data()), pattern_.size(), flags,
                              &error, &offset, nullptr);
  if (code_->code == nullptr) {
    throw Error("regex '" + pattern_ + "' does not compile at offset " + std::to_string(offset) +
                ": " + pcre2_message(error));
  }
  code_->jit = pcre2_jit_compile(code_->code, PCRE2_JIT_COMPLETE) == 0;
  pcre2_pattern_info(code_->code, PCRE2_INFO_CAPTURECOUNT, &code_->groups);
}

Regex::Regex(Regex&&) noexcept = default;
Regex& Regex::operator=(Regex&&) noexcept = default;
Regex::~Regex() = default;

bool Regex::next_match(std::string_view text, size_t from, size_t& start, size_t& end) const {
  MatchState& state = match_state();
  const int rc = match(code_->code, code_->jit, text, from, state.data, state.context);
  if (rc == PCRE2_ERROR_NOMATCH) return false;
  if (rc < 0) throw Error("matching the regex '" + pattern_ + "' failed: " + pcre2_message(rc));
  const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(state.data);
  start = ovector[0];
  end = ovector[1];
  return true;
}

bool Regex::match_groups(std::string_view text, size_t from, std::vector<size_t>& spans) const {
  std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> data(
      pcre2_match_data_create_from_pattern(code_->code, nullptr), pcre2_match_data_free);
  if (match(code_->code, code_->jit, text, from, data.get(), match_state().context) < 0) {
    return false;
  }
  const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(data.get());
  spans.assign(ovector, ovector + 2 * (code_->groups + 1));
  for (size_t& offset : spans) {
    if (offset == PCRE2_UNSET) offset = std::string_view::npos;
  }
  return true;
}

bool Regex::matches_anywhere(std::string_view text) const {
  MatchState& state = match_state();
  return match(code_->code, code_->jit, text, 0, state.data, state.context) >= 0;
}

std::optional<Regex::Groups> Regex::search(std::string_view text) const {
  std::vector<size_t> spans;
  if (!match_groups(text, 0, spans)) return std::nullopt;
  Groups groups;
  for (size_t g = 0; g < spans.size(); g += 2) {
    if (spans[g] == std::string_view::npos) {
      groups.emplace_back(std::nullopt);
    } else {
      groups.emplace_back(std::string(text.substr(spans[g], spans[g + 1] - spans[g])));
    }
  }
  return groups;
}

std::vector<std::string> Regex::findall(std::string_view text) const {
  std::vector<std::string> out;
  std::vector<size_t> spans;
  const size_t g = code_->groups >= 1 ? 2 : 0;  // group 1, else the whole match
  size_t from = 0;
  while (from <= text.size() && match_groups(text, from, spans)) {
    out.emplace_back(spans[g] == std::string_view::npos
                         ? std::string()
                         : std::string(text.substr(spans[g], spans[g + 1] - spans[g])));
    from = resume_at(text, spans[0], spans[1]);
  }
  return out;
}

std::string Regex::sub(std::string_view replacement, std::string_view text) const {
  std::string out;
  std::vector<size_t> spans;
  size_t from = 0;
  size_t copied = 0;
  while (from <= text.size() && match_groups(text, from, spans)) {
    out.append(text.substr(copied, spans[0] - copied));
    for (size_t i = 0; i < replacement.size(); ++i) {
      const char c = replacement[i];
      if (c == '\\' && i + 1 < replacement.size() && replacement[i + 1] >= '1' &&
          replacement[i + 1] <= '9') {
        const size_t g = static_cast<size_t>(replacement[++i] - '0');
        if (g <= code_->groups && spans[2 * g] != std::string_view::npos) {
          out.append(text.substr(spans[2 * g], spans[2 * g + 1] - spans[2 * g]));
        }
      } else {
        out.push_back(c);
      }
    }
    copied = spans[1];
    from = resume_at(text, spans[0], spans[1]);
  }
  out.append(text.substr(std::min(copied, text.size())));
  return out;
}

std::string Regex::escape(std::string_view literal) {
  std::string out;
  for (char c : literal) {
    if (std::string_view("\\^$.|?*+()[]{}-/#&~ ").find(c) != std::string_view::npos)
      out.push_back('\\');
    out.push_back(c);
  }
  return out;
}

}  // namespace vime
