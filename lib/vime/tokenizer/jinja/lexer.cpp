#include "vime/tokenizer/jinja/lexer.hpp"

#include <cstdlib>

#include "vime/tokenizer/jinja/error.hpp"
#include "vime/tokenizer/jinja/python_text.hpp"
#include "vime/tokenizer/jinja/utf8.hpp"

namespace vime::tokenizer::jinja {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_name_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
         static_cast<unsigned char>(c) >= 0x80;
}
bool is_name_char(char c) { return is_name_start(c) || is_digit(c); }

// Jinja2 normalises \r\n and \r to \n and, without keep_trailing_newline, drops one final newline.
std::string normalize_newlines(std::string_view source) {
  std::string out;
  out.reserve(source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\r') {
      if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
      out += '\n';
    } else {
      out += source[i];
    }
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

// Python's "unicode-escape" decoding of a string literal's body, as Jinja2 applies it.
std::string unescape(std::string_view body, int line) {
  std::string out;
  auto hex_value = [&](size_t start, size_t digits) -> long {
    if (start + digits > body.size()) return -1;
    std::string hex(body.substr(start, digits));
    for (char c : hex) {
      if (!std::isxdigit(static_cast<unsigned char>(c))) return -1;
    }
    return std::strtol(hex.c_str(), nullptr, 16);
  };
  for (size_t i = 0; i < body.size(); ++i) {
    char c = body[i];
    if (c != '\\' || i + 1 >= body.size()) {
      out += c;
      continue;
    }
    char e = body[++i];
    switch (e) {
      case '\n':
        break;
      case '\\':
        out += '\\';
        break;
      case '\'':
        out += '\'';
        break;
      case '"':
        out += '"';
        break;
      case 'a':
        out += '\a';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'v':
        out += '\v';
        break;
      case 'x':
      case 'u':
      case 'U': {
        size_t digits = e == 'x' ? 2 : e == 'u' ? 4 : 8;
        long cp = hex_value(i + 1, digits);
        if (cp < 0 || cp > 0x10FFFF) {
          throw TemplateError("TemplateSyntaxError", std::string("truncated \\") + e + " escape",
                              line);
        }
        utf8::append(out, static_cast<char32_t>(cp));
        i += digits;
        break;
      }
      default:
        if (e >= '0' && e <= '7') {
          int value = 0, n = 0;
          while (n < 3 && i < body.size() && body[i] >= '0' && body[i] <= '7')
            value = value * 8 + (body[i++] - '0'), ++n;
          --i;
          utf8::append(out, static_cast<char32_t>(value));
        } else {
          out += '\\';
          out += e;
        }
    }
  }
  return out;
}

class Lexer {
 public:
  Lexer(std::string_view source, const LexerOptions& options)
      : src_(normalize_newlines(source)), options_(options) {}

  std::vector<Token> run() {
    while (pos_ < src_.size()) {
      size_t tag = find_tag();
      if (tag == std::string::npos) {
        emit_data(src_.substr(pos_));
        break;
      }
      char kind = src_[tag + 1];
      size_t after = tag + 2;
      char sign = 0;
      if (after < src_.size() && (src_[after] == '-' || src_[after] == '+')) sign = src_[after++];
      size_t raw_end = kind == '%' ? match_raw_begin(after) : std::string::npos;
      std::string text = src_.substr(pos_, tag - pos_);
      int newlines = count_newlines(text);
      strip_before_tag(text, sign, kind != '{');
      emit_data(std::move(text));
      line_ += newlines;
      pos_ = after;
      line_starting_ = false;
      if (raw_end != std::string::npos) {
        lex_raw(raw_end);
      } else if (kind == '#') {
        lex_comment();
      } else {
        lex_tag(kind == '%');
      }
    }
    tokens_.push_back(Token{Token::Type::kEnd, "", 0, 0, line_});
    return std::move(tokens_);
  }

 private:
  [[noreturn]] void fail(const std::string& message) const {
    throw TemplateError("TemplateSyntaxError", message, line_);
  }

  // Jinja2's message for a character no token starts with: its repr and code-point offset.
  [[noreturn]] void fail_unexpected_char() const {
    size_t next = pos_;
    utf8::next(src_, next);
    fail("unexpected char " + string_repr(std::string_view(src_).substr(pos_, next - pos_)) +
         " at " + std::to_string(utf8::count(std::string_view(src_).substr(0, pos_))));
  }

  static int count_newlines(std::string_view s) {
    int n = 0;
    for (char c : s) n += c == '\n';
    return n;
  }

  size_t find_tag() const {
    for (size_t i = src_.find('{', pos_); i != std::string::npos && i + 1 < src_.size();
         i = src_.find('{', i + 1)) {
      char next = src_[i + 1];
      if (next == '{' || next == '%' || next == '#') return i;
    }
    return std::string::npos;
  }

  void emit_data(std::string text) {
    if (text.empty()) return;
    tokens_.push_back(Token{Token::Type::kData, std::move(text), 0, 0, line_});
  }

  // "{%-" strips all whitespace before the tag; otherwise lstrip_blocks strips spaces and tabs
  // between the line start and a block or comment tag ("{%+" opts out).
  void strip_before_tag(std::string& text, char sign, bool is_block_or_comment) const {
    if (sign == '-') {
      text = std::string(utf8::strip(text, "", false, true));
    } else if (sign != '+' && options_.lstrip_blocks && is_block_or_comment) {
      size_t line_start = text.rfind('\n');
      line_start = line_start == std::string::npos ? 0 : line_start + 1;
      if (line_start > 0 || line_starting_) {
        bool only_blanks = line_start < text.size();
        for (size_t i = line_start; i < text.size() && only_blanks; ++i) {
          only_blanks = text[i] == ' ' || text[i] == '\t' || text[i] == '\v' || text[i] == '\f' ||
                        text[i] == '\r';
        }
        if (only_blanks) text.resize(line_start);
      }
    }
  }

  void skip_whitespace() {
    while (pos_ < src_.size()) {
      size_t next = pos_;
      if (!utf8::is_space(utf8::next(src_, next))) break;
      line_ += src_[pos_] == '\n';
      pos_ = next;
    }
  }

  bool at(std::string_view s) const { return src_.compare(pos_, s.size(), s) == 0; }

  // After "{%" and its sign: `\s*raw\s*(-%}\s*|%})`; returns the position after it, or npos.
  size_t match_raw_begin(size_t p) const {
    while (p < src_.size() && utf8::is_space(static_cast<unsigned char>(src_[p]))) ++p;
    if (src_.compare(p, 3, "raw") != 0) return std::string::npos;
    p += 3;
    if (p < src_.size() && is_name_char(src_[p])) return std::string::npos;
    while (p < src_.size() && utf8::is_space(static_cast<unsigned char>(src_[p]))) ++p;
    if (src_.compare(p, 3, "-%}") == 0) {
      p += 3;
      while (p < src_.size() && utf8::is_space(static_cast<unsigned char>(src_[p]))) ++p;
      return p;
    }
    if (src_.compare(p, 2, "%}") == 0) return p + 2;
    return std::string::npos;
  }

  void finish_tag_end(char sign, bool trims) {
    if (sign == '-') {
      skip_whitespace();
    } else if (sign != '+' && trims && options_.trim_blocks && pos_ < src_.size() &&
               src_[pos_] == '\n') {
      ++pos_;
      ++line_;
    }
    line_starting_ = pos_ > 0 && src_[pos_ - 1] == '\n';
  }

  void lex_raw(size_t content_start) {
    line_ += count_newlines(std::string_view(src_).substr(pos_, content_start - pos_));
    pos_ = content_start;
    line_starting_ = pos_ > 0 && src_[pos_ - 1] == '\n';
    for (size_t i = src_.find("{%", pos_); i != std::string::npos; i = src_.find("{%", i + 1)) {
      size_t p = i + 2;
      char sign = 0;
      if (p < src_.size() && (src_[p] == '-' || src_[p] == '+')) sign = src_[p++];
      while (p < src_.size() && utf8::is_space(static_cast<unsigned char>(src_[p]))) ++p;
      if (src_.compare(p, 6, "endraw") != 0) continue;
      p += 6;
      while (p < src_.size() && utf8::is_space(static_cast<unsigned char>(src_[p]))) ++p;
      char end_sign = 0;
      if (p < src_.size() && (src_[p] == '-' || src_[p] == '+')) end_sign = src_[p++];
      if (src_.compare(p, 2, "%}") != 0) continue;
      std::string text = src_.substr(pos_, i - pos_);
      int newlines = count_newlines(text);
      strip_before_tag(text, sign, true);
      emit_data(std::move(text));
      line_ += newlines + count_newlines(std::string_view(src_).substr(i, p - i));
      pos_ = p + 2;
      finish_tag_end(end_sign, true);
      return;
    }
    fail("Missing end of raw directive");
  }

  void lex_comment() {
    size_t end = src_.find("#}", pos_);
    if (end == std::string::npos) fail("Missing end of comment tag");
    char sign = end > pos_ && (src_[end - 1] == '-' || src_[end - 1] == '+') ? src_[end - 1] : 0;
    line_ += count_newlines(std::string_view(src_).substr(pos_, end - pos_));
    pos_ = end + 2;
    finish_tag_end(sign, true);
  }

  void lex_tag(bool is_block) {
    tokens_.push_back(
        Token{is_block ? Token::Type::kBlockBegin : Token::Type::kVariableBegin, "", 0, 0, line_});
    std::string balance;
    while (true) {
      if (pos_ >= src_.size()) return;  // the parser reports the missing end of the tag
      if (balance.empty()) {
        char sign = 0;
        size_t len = 0;
        if (is_block) {
          if (at("+%}"))
            sign = '+', len = 3;
          else if (at("-%}"))
            sign = '-', len = 3;
          else if (at("%}"))
            len = 2;
        } else {
          if (at("-}}"))
            sign = '-', len = 3;
          else if (at("}}"))
            len = 2;
        }
        if (len > 0) {
          tokens_.push_back(Token{is_block ? Token::Type::kBlockEnd : Token::Type::kVariableEnd, "",
                                  0, 0, line_});
          pos_ += len;
          finish_tag_end(sign, is_block);
          return;
        }
      }
      char c = src_[pos_];
      size_t next = pos_;
      if (utf8::is_space(utf8::next(src_, next))) {
        skip_whitespace();
      } else if (is_digit(c)) {
        lex_number();
      } else if (is_name_start(c)) {
        size_t start = pos_;
        while (pos_ < src_.size() && is_name_char(src_[pos_])) ++pos_;
        tokens_.push_back(Token{Token::Type::kName, src_.substr(start, pos_ - start), 0, 0, line_});
      } else if (c == '\'' || c == '"') {
        lex_string(c);
      } else {
        lex_operator(balance);
      }
    }
  }

  // Digits with single underscores between them, from pos; returns the end or npos.
  size_t scan_digits(size_t p) const {
    if (p >= src_.size() || !is_digit(src_[p])) return std::string::npos;
    while (p < src_.size()) {
      if (is_digit(src_[p])) {
        ++p;
      } else if (src_[p] == '_' && p + 1 < src_.size() && is_digit(src_[p + 1])) {
        p += 2;
      } else {
        break;
      }
    }
    return p;
  }

  void lex_number() {
    size_t start = pos_;
    bool after_dot = start > 0 && src_[start - 1] == '.';
    size_t int_end = scan_digits(start);
    size_t float_end = std::string::npos;
    if (!after_dot) {
      size_t p = int_end;
      size_t frac_end = p < src_.size() && src_[p] == '.' ? scan_digits(p + 1) : std::string::npos;
      size_t exp_start = frac_end != std::string::npos ? frac_end : p;
      if (exp_start < src_.size() && (src_[exp_start] == 'e' || src_[exp_start] == 'E')) {
        size_t q = exp_start + 1;
        if (q < src_.size() && (src_[q] == '+' || src_[q] == '-')) ++q;
        size_t exp_end = scan_digits(q);
        if (exp_end != std::string::npos) float_end = exp_end;
      }
      if (float_end == std::string::npos && frac_end != std::string::npos) float_end = frac_end;
    }
    auto without_underscores = [](std::string s) {
      std::erase(s, '_');
      return s;
    };
    if (float_end != std::string::npos) {
      std::string text = without_underscores(src_.substr(start, float_end - start));
      tokens_.push_back(
          Token{Token::Type::kFloat, text, 0, std::strtod(text.c_str(), nullptr), line_});
      pos_ = float_end;
      return;
    }
    int base = 10;
    size_t digits_start = start;
    if (src_[start] == '0' && start + 1 < src_.size()) {
      char p = static_cast<char>(std::tolower(static_cast<unsigned char>(src_[start + 1])));
      base = p == 'x' ? 16 : p == 'o' ? 8 : p == 'b' ? 2 : 10;
      if (base != 10) digits_start = start + 2;
    }
    size_t end = digits_start;
    auto valid = [&](char ch) {
      ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      if (base == 16) return is_digit(ch) || (ch >= 'a' && ch <= 'f');
      return ch >= '0' && ch < static_cast<char>('0' + base);
    };
    if (base == 10 && src_[start] == '0') {
      end = start + 1;  // "0(_?0)*"
      while (end < src_.size() && (src_[end] == '0' || (src_[end] == '_' && end + 1 < src_.size() &&
                                                        src_[end + 1] == '0')))
        ++end;
    } else {
      while (end < src_.size() && (valid(src_[end]) || (src_[end] == '_' && end + 1 < src_.size() &&
                                                        valid(src_[end + 1]))))
        ++end;
      if (end == digits_start) fail("invalid integer literal");
    }
    std::string text = without_underscores(src_.substr(digits_start, end - digits_start));
    tokens_.push_back(Token{Token::Type::kInteger, src_.substr(start, end - start),
                            static_cast<int64_t>(std::strtoull(text.c_str(), nullptr, base)), 0,
                            line_});
    pos_ = end;
  }

  void lex_string(char quote) {
    size_t p = pos_ + 1;
    while (p < src_.size() && src_[p] != quote) p += src_[p] == '\\' ? 2 : 1;
    if (p >= src_.size()) fail_unexpected_char();
    std::string_view body = std::string_view(src_).substr(pos_ + 1, p - pos_ - 1);
    tokens_.push_back(Token{Token::Type::kString, unescape(body, line_), 0, 0, line_});
    line_ += count_newlines(body);
    pos_ = p + 1;
  }

  void lex_operator(std::string& balance) {
    static constexpr std::string_view kTwo[] = {"//", "**", "==", "!=", ">=", "<="};
    for (std::string_view op : kTwo) {
      if (at(op)) {
        tokens_.push_back(Token{Token::Type::kOperator, std::string(op), 0, 0, line_});
        pos_ += 2;
        return;
      }
    }
    char c = src_[pos_];
    if (std::string_view("+-/*%~[](){}=.:|,;<>").find(c) == std::string_view::npos)
      fail_unexpected_char();
    if (c == '(' || c == '[' || c == '{') {
      balance += c == '(' ? ')' : c == '[' ? ']' : '}';
    } else if (c == ')' || c == ']' || c == '}') {
      if (balance.empty()) fail(std::string("unexpected '") + c + "'");
      if (balance.back() != c)
        fail(std::string("unexpected '") + c + "', expected '" + balance.back() + "'");
      balance.pop_back();
    }
    tokens_.push_back(Token{Token::Type::kOperator, std::string(1, c), 0, 0, line_});
    ++pos_;
  }

  std::string src_;
  LexerOptions options_;
  size_t pos_ = 0;
  int line_ = 1;
  bool line_starting_ = true;
  std::vector<Token> tokens_;
};

}  // namespace

std::vector<Token> tokenize(std::string_view source, const LexerOptions& options) {
  return Lexer(source, options).run();
}

}  // namespace vime::tokenizer::jinja
