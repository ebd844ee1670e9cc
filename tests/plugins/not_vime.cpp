// A perfectly good shared library that is not a vime plugin.
extern "C" __attribute__((visibility("default"))) int add_numbers(int a, int b) { return a + b; }
