#define PCRE2_CODE_UNIT_WIDTH 8
#include "vime/tokenizer/regex.hpp"

#include <pcre2.h>

#include "vime/error.hpp"
#include "vime/tokenizer/onig_compat.hpp"

namespace vime::tokenizer {

struct Regex::Code {
  pcre2_code* code = nullptr;
  bool jit = false;
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

pcre2_code* compile(const std::string& pattern, int& error, PCRE2_SIZE& offset) {
  return pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                       PCRE2_UTF | PCRE2_UCP, &error, &offset, nullptr);
}

}  // namespace

Regex::Regex(const std::string& pattern) : pattern_(pattern), code_(std::make_unique<Code>()) {
  int error = 0;
  PCRE2_SIZE offset = 0;
  const std::string rewritten = pcre2_pattern_for_oniguruma(pattern);
  if (rewritten != pattern) code_->code = compile(rewritten, error, offset);
  if (code_->code == nullptr) code_->code = compile(pattern, error, offset);
  if (code_->code == nullptr) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error, message, sizeof(message));
    throw Error("tokenizer: the pre-tokenizer regex '" + pattern + "' does not compile at offset " +
                std::to_string(offset) + ": " + reinterpret_cast<const char*>(message));
  }
  code_->jit = pcre2_jit_compile(code_->code, PCRE2_JIT_COMPLETE) == 0;
}

Regex::Regex(Regex&&) noexcept = default;
Regex& Regex::operator=(Regex&&) noexcept = default;
Regex::~Regex() = default;

bool Regex::next_match(std::string_view text, size_t from, size_t& start, size_t& end) const {
  MatchState& state = match_state();
  const auto subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  int rc = code_->jit ? pcre2_jit_match(code_->code, subject, text.size(), from, 0, state.data,
                                        state.context)
                      : pcre2_match(code_->code, subject, text.size(), from, PCRE2_NO_UTF_CHECK,
                                    state.data, state.context);
  if (rc == PCRE2_ERROR_NOMATCH) return false;
  if (rc < 0) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(rc, message, sizeof(message));
    throw Error("tokenizer: matching the pre-tokenizer regex failed: " +
                std::string(reinterpret_cast<const char*>(message)));
  }
  const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(state.data);
  start = ovector[0];
  end = ovector[1];
  return true;
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

}  // namespace vime::tokenizer
