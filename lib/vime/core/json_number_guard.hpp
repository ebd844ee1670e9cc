// RapidJSON 1.1.0 (Debian 12's) has undefined behaviour converting some numbers with
// kParseFullPrecisionFlag, found by fuzz_json under UBSan, fixed only in later RapidJSON:
// - digits all zero, exponent off its fast path ("0e-30", "-0.0E400"): DiyFp::Normalize calls
//   __builtin_clzll(0) ("passing zero to clz()");
// - a decimal exponent past its table of cached powers, above ("1" + 100 zeros + ".5e300") or
//   below ("0." + 400 zeros + "1e-300"): an out-of-bounds read in GetCachedPowerByIndex, and a
//   garbage value;
// - NaN or Infinity followed by a fraction or an exponent ("NaNe9"): an assertion, or a read before
//   its digit buffer.
// Every reader that hands outside text to RapidJSON that way passes it through this first.
#pragma once

#include <string>
#include <string_view>

namespace vime::core {

// `text` with each such number (outside strings) resolved as Python's json resolves it: zeros and
// numbers below 1e-325 written as 0.0 or -0.0, padded with spaces so every offset stays where it
// was; a number of 1e309 or more is the error RapidJSON gives 1e400, and NaN or Infinity followed
// by '.', 'e' or 'E' an invalid value (vime::Error naming `where` and the offset). Returns `text`
// itself (no copy) when nothing changes, otherwise a view of `storage`.
std::string_view guard_json_numbers(std::string_view text, std::string_view where,
                                    std::string& storage);

}  // namespace vime::core
