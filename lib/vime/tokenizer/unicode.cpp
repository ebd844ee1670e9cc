#include "vime/tokenizer/unicode.hpp"

#include <utf8proc.h>

#include <cstdlib>
#include <memory>

#include "vime/error.hpp"

namespace vime::tokenizer {
namespace {

constexpr char32_t kReplacement = 0xFFFD;

// Length of the valid UTF-8 sequence at text[pos], or 0 when the bytes there are not one. `maximal`
// receives the length of the maximal subpart (the bytes that one U+FFFD replaces) when invalid.
size_t valid_sequence_length(std::string_view text, size_t pos, size_t& maximal) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(pos);
  maximal = 1;
  if (lead < 0x80) return 1;
  size_t length = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) lo = 0xA0;
    if (lead == 0xED) hi = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) lo = 0x90;
    if (lead == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  for (size_t i = 1; i < length; ++i) {
    if (pos + i >= text.size()) return 0;
    const unsigned char b = byte(pos + i);
    const bool ok = i == 1 ? (b >= lo && b <= hi) : (b >= 0x80 && b <= 0xBF);
    if (!ok) return 0;
    maximal = i + 1;
  }
  return length;
}

char32_t decode_valid(std::string_view text, size_t pos, size_t length) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[pos + i]); };
  switch (length) {
    case 1:
      return byte(0);
    case 2:
      return ((byte(0) & 0x1F) << 6) | (byte(1) & 0x3F);
    case 3:
      return ((byte(0) & 0x0F) << 12) | ((byte(1) & 0x3F) << 6) | (byte(2) & 0x3F);
    default:
      return ((byte(0) & 0x07) << 18) | ((byte(1) & 0x3F) << 12) | ((byte(2) & 0x3F) << 6) |
             (byte(3) & 0x3F);
  }
}

}  // namespace

char32_t next_code_point(std::string_view text, size_t& pos) {
  size_t maximal = 1;
  const size_t length = valid_sequence_length(text, pos, maximal);
  if (length == 0) {
    pos += maximal;
    return kReplacement;
  }
  const char32_t cp = decode_valid(text, pos, length);
  pos += length;
  return cp;
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

size_t utf8_length(unsigned char lead) {
  if (lead < 0xC0) return 1;
  if (lead < 0xE0) return 2;
  if (lead < 0xF0) return 3;
  if (lead < 0xF8) return 4;
  return 1;
}

bool is_valid_utf8(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    if (static_cast<unsigned char>(text[pos]) < 0x80) {
      ++pos;
      continue;
    }
    size_t maximal = 1;
    const size_t length = valid_sequence_length(text, pos, maximal);
    if (length == 0) return false;
    pos += length;
  }
  return true;
}

std::string utf8_lossy(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  size_t pos = 0;
  while (pos < bytes.size()) {
    size_t maximal = 1;
    const size_t length = valid_sequence_length(bytes, pos, maximal);
    if (length == 0) {
      append_utf8(out, kReplacement);
      pos += maximal;
    } else {
      out.append(bytes.substr(pos, length));
      pos += length;
    }
  }
  return out;
}

bool is_whitespace(char32_t cp) {
  if (cp <= 0x20) return cp == 0x20 || (cp >= 0x09 && cp <= 0x0D);
  if (cp < 0x85) return false;
  return cp == 0x85 || cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) ||
         cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

bool is_numeric(char32_t cp) {
  if (cp < 0x80) return cp >= '0' && cp <= '9';
  const auto category = utf8proc_category(static_cast<utf8proc_int32_t>(cp));
  return category == UTF8PROC_CATEGORY_ND || category == UTF8PROC_CATEGORY_NL ||
         category == UTF8PROC_CATEGORY_NO;
}

bool is_alphanumeric(char32_t cp) {
  if (cp < 0x80) {
    return (cp >= '0' && cp <= '9') || (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z');
  }
  // Alphabetic is letters, Nl and Other_Alphabetic; utf8proc has no Other_Alphabetic table, so
  // spacing and non-spacing marks stand in for it.
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(cp))) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
    case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_MC:
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO:
      return true;
    default:
      return false;
  }
}

namespace {

// Whether NFC could change text with this character in it: it has a canonical decomposition, is a
// combining mark, can be the second half of a canonical composition, or is a Hangul jamo. Text
// without any such character is already NFC (the quick check the Unicode standard describes,
// conservatively).
bool may_change_under_nfc(char32_t cp) {
  if ((cp >= 0x1100 && cp <= 0x11FF) || (cp >= 0xA960 && cp <= 0xA97F) ||
      (cp >= 0xD7B0 && cp <= 0xD7FF)) {
    return true;
  }
  const utf8proc_property_t* p = utf8proc_get_property(static_cast<utf8proc_int32_t>(cp));
  const bool canonical_decomposition = p->decomp_seqindex != UINT16_MAX && p->decomp_type == 0;
  const bool second_of_pair = p->comb_index != UINT16_MAX && (p->comb_index & 0x8000) != 0;
  return canonical_decomposition || p->combining_class != 0 || second_of_pair;
}

std::string map_with_utf8proc(std::string_view text, int options);

// NFC touching only what can change: the text is cut before each character that
// may_change_under_nfc leaves alone (a starter that composes with nothing before it), and only the
// pieces holding a flagged character, from the starter before it, go through utf8proc.
std::string nfc_where_needed(std::string_view text) {
  std::string out;
  size_t copied = 0;     // text before this is in `out`
  size_t last_safe = 0;  // where the last unflagged character starts
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t start = pos;
    if (static_cast<unsigned char>(text[pos]) < 0x80) {
      ++pos;
      last_safe = start;
      continue;
    }
    if (!may_change_under_nfc(next_code_point(text, pos))) {
      last_safe = start;
      continue;
    }
    // A run needing NFC: from the last safe starter to the next safe character.
    size_t end = pos;
    while (end < text.size()) {
      size_t next = end;
      if (static_cast<unsigned char>(text[end]) < 0x80) break;
      if (!may_change_under_nfc(next_code_point(text, next))) break;
      end = next;
    }
    if (out.empty()) out.reserve(text.size());
    out.append(text.substr(copied, last_safe - copied));
    out += map_with_utf8proc(text.substr(last_safe, end - last_safe),
                             UTF8PROC_STABLE | UTF8PROC_COMPOSE);
    copied = end;
    pos = end;
    last_safe = end;
  }
  if (copied == 0) return std::string(text);
  out.append(text.substr(copied));
  return out;
}

}  // namespace

std::string normalize_unicode(std::string_view text, NormalForm form) {
  bool ascii = true;
  for (char c : text) ascii = ascii && static_cast<unsigned char>(c) < 0x80;
  if (ascii) return std::string(text);
  if (form == NormalForm::kNfc) return nfc_where_needed(text);
  int options = UTF8PROC_STABLE;
  switch (form) {
    case NormalForm::kNfc:
      options |= UTF8PROC_COMPOSE;
      break;
    case NormalForm::kNfd:
      options |= UTF8PROC_DECOMPOSE;
      break;
    case NormalForm::kNfkc:
      options |= UTF8PROC_COMPOSE | UTF8PROC_COMPAT;
      break;
    case NormalForm::kNfkd:
      options |= UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT;
      break;
  }
  return map_with_utf8proc(text, options);
}

namespace {

std::string map_with_utf8proc(std::string_view text, int options) {
  utf8proc_uint8_t* result = nullptr;
  const auto length = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()),
                                   static_cast<utf8proc_ssize_t>(text.size()), &result,
                                   static_cast<utf8proc_option_t>(options));
  if (length < 0) {
    throw Error(std::string("tokenizer: cannot normalize text: ") + utf8proc_errmsg(length));
  }
  std::unique_ptr<utf8proc_uint8_t, decltype(&std::free)> owned(result, &std::free);
  return std::string(reinterpret_cast<const char*>(result), static_cast<size_t>(length));
}

}  // namespace

std::string to_lower(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (pos < text.size()) {
    const char32_t cp = next_code_point(text, pos);
    append_utf8(out, static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(cp))));
  }
  return out;
}

}  // namespace vime::tokenizer
