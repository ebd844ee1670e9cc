// What each fuzz harness (fuzz_<name>.cpp) defines: the libFuzzer entry point, and words its
// inputs are made of, for the mutator of fuzz_driver.cpp. A harness catches only the errors its
// parser documents (vime::Error and its kinds): anything else escaping is a bug, as a crash is.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
// Optional (libFuzzer's): one-time setup before the first input, outside the per-input timeout.
extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) __attribute__((weak));
std::vector<std::string> fuzz_dictionary();
