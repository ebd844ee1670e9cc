// A plugin that reaches past the public headers: ctest layers_plugins runs cmake/check_layers.cmake
// on this tree (never built) and expects it to name the include below.
#include <vime/hooks.hpp>

#include "vime/http/fetch.hpp"
