// rm_hub's math answer parser (a response and a label from a dataset: both outside input):
// extraction, normalisation and the sympy-style equivalence return an answer without crashing.
#include <string>

#include "fuzz_harness.hpp"
#include "math/boxed.hpp"
#include "math/grade.hpp"
#include "math/latex_to_text.hpp"
#include "vime/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const size_t cut = text.find('\x01');  // response \x01 label
  const std::string response = text.substr(0, cut);
  const std::string label = cut == std::string::npos ? text : text.substr(cut + 1);
  try {
    (void)vime::rm::grade_answer_verl(response, label);
    (void)vime::rm::grade_answer_mathd(vime::rm::extract_boxed_answer(response), label);
    (void)vime::rm::grade_answer_sympy(response, label);
  } catch (const vime::Error&) {
  }
  return 0;
}

std::vector<std::string> fuzz_dictionary() {
  return {"\\boxed{",   "}",       "{",
          "\\frac{",    "\\dfrac", "\\sqrt{",
          "\\sqrt[3]{", "^",       "_",
          "\\pi",       "\\infty", "\\left(",
          "\\right)",   "\\cdot",  "\\times",
          "\\text{",    "\\mbox{", "\\%",
          "$",          "\\$",     "0.5",
          "1/2",        "-",       "+",
          "=",          ",",       "(",
          ")",          "[",       "]",
          "\\le",       "\\in",    "x",
          "e",          "1e400",   "99999999999999999999",
          "\\\\",       "\x01",    "\\begin{pmatrix}",
          "&"};
}
