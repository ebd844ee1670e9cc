// Base64 as vLLM's nccl_unique_id_b64 spells it: RFC 4648 standard alphabet, '=' padding (Python's
// base64.b64encode / b64decode), not the URL-safe variant.
#pragma once

#include <string>
#include <string_view>

namespace vime {

std::string base64_encode(std::string_view bytes);
// Throws vime::Error naming `what` on a character outside the alphabet or a bad length/padding.
std::string base64_decode(std::string_view text, const std::string& what);

}  // namespace vime
