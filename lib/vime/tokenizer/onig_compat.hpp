// HF writes pre-tokenizer regexes for Oniguruma; PCRE2 reads two things differently, and this
// rewrites a pattern so PCRE2 matches what Oniguruma matches:
//  - \p{Han} (a script name) is the Script property in Oniguruma but Script Extensions in PCRE2
//    10.40+, which also takes in shared punctuation such as U+3002: it becomes \p{sc:Han}.
//  - PCRE2 10.42 knows Unicode 14, HF's Oniguruma (and utf8proc) Unicode 15: characters new in 15
//    are Cn to PCRE2. \p{L}, \p{So}, ... get those characters (by utf8proc's category) added
//    explicitly.
#pragma once

#include <string>

#include "vime/regex.hpp"

namespace vime::tokenizer {

// A tokenizer.json pattern compiled as Oniguruma reads it: from the rewrite below, or from the
// pattern as written where PCRE2 cannot take the rewrite. The text it matches must be valid UTF-8.
// Throws vime::Error "tokenizer: the pre-tokenizer regex '...' does not compile ...".
Regex oniguruma_regex(const std::string& pattern);

std::string pcre2_pattern_for_oniguruma(const std::string& pattern);

}  // namespace vime::tokenizer
