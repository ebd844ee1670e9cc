#include "math/latex_to_text.hpp"

#include <utf8proc.h>

#include <cstdlib>
#include <string_view>
#include <unordered_map>

#include "common/py_text.hpp"

namespace vime::rm {
namespace {

const std::unordered_map<std::string_view, std::string_view>& symbol_macros() {
  static const std::unordered_map<std::string_view, std::string_view> table = {
      {"lvert", "|"},
      {"rvert", "|"},
      {"digamma", "ϝ"},
      {"pi", "π"},
      {"infty", "∞"},
      {"cdot", "·"},
      {"times", "×"},
      {"cup", "∪"},
      {"cap", "∩"},
      {"le", "≤"},
      {"leq", "≤"},
      {"ge", "≥"},
      {"geq", "≥"},
      {"neq", "≠"},
      {"ne", ""},
      {"pm", "±"},
      {"mp", "∓"},
      {"div", "÷"},
      {"circ", "∘"},
      {"angle", "∠"},
      {"in", "∈"},
      {"to", "→"},
      {"ldots", "…"},
      {"dots", "…"},
      {"cdots", "⋯"},
      {"approx", "≈"},
      {"emptyset", "∅"},
      {"lbrace", "{"},
      {"rbrace", "}"},
      {"langle", "⟨"},
      {"rangle", "⟩"},
      {"prime", "'"},
      {"quad", "  "},
      {"qquad", "    "},
      {"left", ""},
      {"right", ""},
      {"displaystyle", ""},
      {"degree", ""},
      {"lfloor", "⌊"},
      {"rfloor", "⌋"},
      {"lceil", "⌈"},
      {"rceil", "⌉"},
      {"alpha", "α"},
      {"beta", "β"},
      {"gamma", "γ"},
      {"delta", "δ"},
      {"epsilon", "ϵ"},
      {"varepsilon", "ε"},
      {"zeta", "ζ"},
      {"eta", "η"},
      {"theta", "θ"},
      {"iota", "ι"},
      {"kappa", "κ"},
      {"lambda", "λ"},
      {"mu", "μ"},
      {"nu", "ν"},
      {"xi", "ξ"},
      {"rho", "ρ"},
      {"sigma", "σ"},
      {"tau", "τ"},
      {"phi", "ϕ"},
      {"varphi", "φ"},
      {"chi", "χ"},
      {"psi", "ψ"},
      {"omega", "ω"},
      {"Delta", "Δ"},
      {"Omega", "Ω"},
      {"Sigma", "Σ"},
      {"Pi", "Π"},
      {"Gamma", "Γ"},
      {"Theta", "Θ"},
      {"log", "log"},
      {"ln", "ln"},
      {"exp", "exp"},
      {"sin", "sin"},
      {"cos", "cos"},
      {"tan", "tan"},
      {"arcsin", "arcsin"},
      {"arccos", "arccos"},
      {"arctan", "arctan"},
      {"max", "max"},
      {"min", "min"},
      {"lim", "lim"},
      {"mid", "|"},
      {"vert", "|"},
      {"sim", "∼"},
      {"equiv", "≡"},
      {"perp", "⊥"},
      {"parallel", "∥"},
      {"subset", "⊂"},
      {"subseteq", "⊆"},
      {"setminus", "∖"},
      {"forall", "∀"},
      {"exists", "∃"},
      {"rightarrow", "→"},
      {"Rightarrow", "⇒"},
      {"star", "⋆"},
      {"ast", "∗"},
      {"bullet", "∙"},
      {"sqcup", "⊔"},
      {"hbar", "ℏ"},
      {"ell", "ℓ"},
      {"partial", "∂"},
      {"nabla", "∇"},
      {"sum", "∑"},
      {"prod", "∏"},
      {"int", "∫"},
      {"oint", "∮"},
      {"neg", "¬"},
      {"land", "∧"},
      {"lor", "∨"},
      {"wedge", "∧"},
      {"vee", "∨"},
      {"varnothing", "∅"},
      {"notin", "∉"},
      {"ni", "∋"},
      {"supset", "⊃"},
      {"supseteq", "⊇"},
      {"subsetneq", "⊊"},
      {"bigcup", "⋃"},
      {"bigcap", "⋂"},
      {"leqslant", "⩽"},
      {"geqslant", "⩾"},
      {"nmid", "∤"},
      {"dagger", "†"},
      {"vdots", "⋮"},
      {"ddots", "⋱"},
      {"aleph", "ℵ"},
      {"wp", "℘"},
      {"Leftrightarrow", "⇔"},
      {"leftarrow", "←"},
      {"mapsto", "↦"},
      {"uparrow", "↑"},
      {"propto", "∝"},
      {"simeq", "≃"},
      {"cong", "≅"},
      {"doteq", "≐"},
      {"oplus", "⊕"},
      {"otimes", "⊗"},
      {"odot", "⊙"},
      {"vartheta", "ϑ"},
      {"varpi", "ϖ"},
      {"varrho", "ϱ"},
      {"varsigma", "ς"},
      {"upsilon", "υ"},
      {"Upsilon", "Υ"},
      {"Xi", "Ξ"},
      {"Psi", "Ψ"},
      {"Phi", "Φ"},
      {"Lambda", "Λ"},
      {"omicron", "ο"},
      {"textasciitilde", "~"},
      {"textbackslash", "\\"},
      {"textdollar", "$"},
      {"o", "ø"},
      {"O", "Ø"},
      {"ss", "ß"},
      {"ae", "æ"},
      {"i", "ı"},
      {"j", "ȷ"},
      {"l", "ł"},
      {"L", "Ł"},
      {"AA", "Å"},
      {"aa", "å"},
      {"textdegree", "°"},
      {"backslash", "\\"},
      {"square", "□"},
      {"blacksquare", "▪"},
      {"smallsetminus", "∖"},
      {"measuredangle", "∡"},
      {"ll", "≪"},
      {"gg", "≫"},
      {"iint", "∬"},
      {"sup", "sup"},
      {"inf", "inf"},
      {"sinh", "sinh"},
      {"cosh", "cosh"},
      {"tanh", "tanh"},
      {"limsup", "lim sup"},
      {"liminf", "lim inf"},
      {"vspace", "\n"},
  };
  return table;
}

// Accents pylatexenc renders as a combining mark after the argument.
std::string_view accent_mark(std::string_view name) {
  static const std::unordered_map<std::string_view, std::string_view> marks = {
      {"bar", "\u0305"},   {"hat", "\u0302"},   {"vec", "\u20d7"},   {"tilde", "\u0303"},
      {"dot", "\u0307"},   {"ddot", "\u0308"},  {"check", "\u030c"}, {"breve", "\u0306"},
      {"acute", "\u0301"}, {"grave", "\u0300"},
  };
  auto it = marks.find(name);
  return it == marks.end() ? std::string_view() : it->second;
}

std::string encode(char32_t cp) {
  utf8proc_uint8_t bytes[4];
  const auto n = utf8proc_encode_char(static_cast<utf8proc_int32_t>(cp), bytes);
  return std::string(reinterpret_cast<const char*>(bytes), static_cast<size_t>(n));
}

// \mathbb, \mathbf, \mathit: the Unicode mathematical alphanumerics pylatexenc uses.
std::string math_alphabet(std::string_view font, const std::string& text) {
  std::string out;
  for (char c : text) {
    bool upper = c >= 'A' && c <= 'Z', lower = c >= 'a' && c <= 'z';
    if (font == "mathbb") {
      static const std::unordered_map<char, std::string_view> special = {
          {'C', "ℂ"}, {'H', "ℍ"}, {'N', "ℕ"}, {'P', "ℙ"}, {'Q', "ℚ"}, {'R', "ℝ"}, {'Z', "ℤ"}};
      if (auto it = special.find(c); it != special.end()) {
        out += it->second;
      } else if (upper) {
        out += encode(0x1D538 + static_cast<char32_t>(c - 'A'));
      } else if (lower) {
        out += encode(0x1D552 + static_cast<char32_t>(c - 'a'));
      } else {
        out.push_back(c);
      }
    } else if (font == "mathbf") {
      if (upper)
        out += encode(0x1D400 + static_cast<char32_t>(c - 'A'));
      else if (lower)
        out += encode(0x1D41A + static_cast<char32_t>(c - 'a'));
      else
        out.push_back(c);
    } else if (font == "mathcal") {
      static const std::unordered_map<char, std::string_view> special = {
          {'B', "ℬ"}, {'E', "ℰ"}, {'F', "ℱ"}, {'H', "ℋ"}, {'I', "ℐ"}, {'L', "ℒ"},
          {'M', "ℳ"}, {'R', "ℛ"}, {'e', "ℯ"}, {'g', "ℊ"}, {'o', "ℴ"}};
      if (auto it = special.find(c); it != special.end()) {
        out += it->second;
      } else if (upper) {
        out += encode(0x1D49C + static_cast<char32_t>(c - 'A'));
      } else if (lower) {
        out += encode(0x1D4B6 + static_cast<char32_t>(c - 'a'));
      } else {
        out.push_back(c);
      }
    } else {  // mathit
      if (c == 'h')
        out += "ℎ";
      else if (upper)
        out += encode(0x1D434 + static_cast<char32_t>(c - 'A'));
      else if (lower)
        out += encode(0x1D44E + static_cast<char32_t>(c - 'a'));
      else
        out.push_back(c);
    }
  }
  return out;
}

std::string nfc(const std::string& text) {
  auto* composed = utf8proc_NFC(reinterpret_cast<const utf8proc_uint8_t*>(text.c_str()));
  if (composed == nullptr) return text;
  std::string out(reinterpret_cast<const char*>(composed));
  std::free(composed);
  return out;
}

class Renderer {
 public:
  explicit Renderer(std::string_view s, int depth = 0) : s_(s), depth_(depth) {}

  std::string render_all() {
    std::string out;
    while (i_ < s_.size()) render_one(out, /*top_level=*/true);
    return out;
  }

 private:
  bool at_end() const { return i_ >= s_.size(); }

  static bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

  void skip_spaces() {
    while (!at_end() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }

  // Renders `{...}` starting after the '{' up to its '}' (or the end).
  std::string render_group_body() {
    std::string out;
    if (depth_ >= kMaxDepth) {  // pathological nesting: keep the rest as plain text
      out.assign(s_.substr(i_));
      i_ = s_.size();
      return out;
    }
    ++depth_;
    while (!at_end() && s_[i_] != '}') render_one(out, false);
    if (!at_end()) ++i_;  // '}'
    --depth_;
    return out;
  }

  // A macro argument: {group}, a macro, or one character.
  std::string render_argument() {
    skip_spaces();
    if (at_end()) return "";
    std::string out;
    if (s_[i_] == '{') {
      ++i_;
      return render_group_body();
    }
    if (s_[i_] == '\\') {
      render_one(out, false);
      return out;
    }
    size_t n = utf8_char_size(s_, i_);
    out.assign(s_.substr(i_, n));
    i_ += n;
    return out;
  }

  void skip_optional_argument() {
    size_t save = i_;
    skip_spaces();
    if (!at_end() && s_[i_] == '[') {
      size_t close = s_.find(']', i_);
      if (close != std::string_view::npos) {
        i_ = close + 1;
        return;
      }
    }
    i_ = save;
  }

  // \begin{name}...\end{name}. Matrices render as pylatexenc does: "[ 1 2; 3 4 ]"; other
  // environments as their text with cells spaced and rows on lines.
  void render_environment(std::string& out) {
    skip_spaces();
    if (at_end() || s_[i_] != '{') return;
    size_t close = s_.find('}', i_);
    if (close == std::string_view::npos) return;
    std::string env(s_.substr(i_ + 1, close - i_ - 1));
    i_ = close + 1;
    std::string end_tag = "\\end{" + env + "}";
    size_t end = s_.find(end_tag, i_);
    std::string_view body =
        s_.substr(i_, end == std::string_view::npos ? std::string_view::npos : end - i_);
    i_ = end == std::string_view::npos ? s_.size() : end + end_tag.size();
    if (env == "array" && !body.empty() && body.front() == '{') {  // the column spec
      size_t spec_end = body.find('}');
      body = spec_end == std::string_view::npos ? std::string_view() : body.substr(spec_end + 1);
    }
    const bool matrix = env == "pmatrix" || env == "bmatrix" || env == "array";
    std::string text = matrix ? "[ " : "";
    auto rows = split(body, "\\\\");
    for (size_t r = 0; r < rows.size(); ++r) {
      if (r > 0) text += matrix ? "; " : "\n";
      auto cells = split(rows[r], "&");
      for (size_t c = 0; c < cells.size(); ++c) {
        if (c > 0) text += matrix ? " " : "     ";
        std::string cell = Renderer(cells[c], depth_ + 1).render_all();
        text += matrix ? strip(cell) : cell;
      }
    }
    out += matrix ? text + " ]" : text;
  }

  void render_macro(std::string& out) {
    ++i_;  // '\'
    if (at_end()) return;
    if (!is_letter(s_[i_])) {
      char c = s_[i_];
      i_ += utf8_char_size(s_, i_);
      switch (c) {
        case '\\':
          out += "\n";
          break;
        case ',':
        case ';':
        case ':':
        case ' ':
        case '>':
          out += " ";
          break;
        case '!':
          break;
        case '%':
        case '$':
        case '{':
        case '}':
        case '&':
        case '#':
        case '_':
          out.push_back(c);
          break;
        case '|':
          out += "‖";
          break;
        default:
          break;
      }
      return;
    }
    size_t start = i_;
    while (!at_end() && is_letter(s_[i_])) ++i_;
    std::string_view name = s_.substr(start, i_ - start);
    skip_spaces();
    if (name == "frac") {
      std::string num = render_argument();
      std::string den = render_argument();
      out += num + "/" + den;
      return;
    }
    if (name == "sqrt") {
      skip_optional_argument();
      out += "√(" + render_argument() + ")";
      return;
    }
    if (name == "begin") {
      render_environment(out);
      return;
    }
    if (name == "not") {  // \not= -> ≠: a long solidus over the next symbol, composed by NFC
      out += nfc(render_argument() + "\u0338");
      return;
    }
    if (name == "mbox" || name == "hspace") {
      render_argument();
      return;
    }
    if (name == "vspace") {
      render_argument();
      out += "\n";
      return;
    }
    if (auto accent = accent_mark(name); !accent.empty()) {
      // The mark goes after every character, then NFC composes what it can (\tilde{a} -> ã).
      std::string arg = render_argument(), marked;
      for (size_t k = 0; k < arg.size(); k += utf8_char_size(arg, k)) {
        marked += arg.substr(k, utf8_char_size(arg, k));
        marked += accent;
      }
      out += nfc(marked);
      return;
    }
    if (name == "mathbb" || name == "mathbf" || name == "mathit" || name == "mathcal") {
      out += math_alphabet(name, render_argument());
      return;
    }
    auto& table = symbol_macros();
    if (auto it = table.find(name); it != table.end()) out += it->second;
    // Any other macro (\text, \mathrm, \boxed, unknown ones) renders as nothing; the group that
    // follows renders as its text.
  }

  void render_one(std::string& out, bool top_level) {
    char c = s_[i_];
    switch (c) {
      case '\\':
        if (depth_ >= kMaxDepth) {  // \frac\frac\frac...: keep the rest as plain text
          out.append(s_.substr(i_));
          i_ = s_.size();
          return;
        }
        ++depth_;
        render_macro(out);
        --depth_;
        return;
      case '{':
        ++i_;
        out += render_group_body();
        return;
      case '}':
        ++i_;
        if (!top_level) out.push_back('}');
        return;
      case '$':
        ++i_;
        return;
      case '~':
        ++i_;
        out += "\xc2\xa0";
        return;
      case '-':
        // TeX ligatures, which pylatexenc applies: --- is an em dash, -- an en dash.
        if (s_.substr(i_, 3) == "---") {
          out += "—";
          i_ += 3;
        } else if (s_.substr(i_, 2) == "--") {
          out += "–";
          i_ += 2;
        } else {
          out.push_back('-');
          ++i_;
        }
        return;
      default: {
        size_t n = utf8_char_size(s_, i_);
        out.append(s_.substr(i_, n));
        i_ += n;
      }
    }
  }

  static constexpr int kMaxDepth = 256;
  std::string_view s_;
  size_t i_ = 0;
  int depth_ = 0;
};

}  // namespace

std::string latex_to_text(std::string_view latex) { return Renderer(latex).render_all(); }

}  // namespace vime::rm
