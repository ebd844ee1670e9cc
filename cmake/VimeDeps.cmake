# Third-party libraries found by path rather than pkg-config: on the GPU machine the Debian copies live in
# /opt/vime-deps (reached through CMAKE_PREFIX_PATH) and their .pc files require packages that machine lacks
# (cpp-httplib's names brotli). Each becomes an imported target vime::<name>.
function(vime_import_library name header)
  find_path(VIME_${name}_INCLUDE_DIR ${header} REQUIRED)
  find_library(VIME_${name}_LIBRARY NAMES ${ARGN} REQUIRED)
  add_library(vime::${name} UNKNOWN IMPORTED GLOBAL)
  set_target_properties(vime::${name} PROPERTIES
    IMPORTED_LOCATION ${VIME_${name}_LIBRARY}
    INTERFACE_INCLUDE_DIRECTORIES ${VIME_${name}_INCLUDE_DIR})
endfunction()

# PCRE2 by its runtime soname first: the GPU machine's kit has the -dev package only, whose libpcre2-8.so
# link dangles there, so a plain `pcre2-8` finds the static archive; linked into both libvime and a program,
# the two copies crashed in pcre2_jit_compile.
vime_import_library(pcre2 pcre2.h libpcre2-8.so.0 pcre2-8)  # tokenizer pre-tokenizers, rm_hub regexes (JIT)
vime_import_library(utf8proc utf8proc.h utf8proc)   # Unicode normalization
vime_import_library(httplib httplib.h cpp-httplib)  # HTTP server (tests' remote RM, later `vime serve`)
# Debian builds libcpp-httplib.so with CPPHTTPLIB_OPENSSL_SUPPORT (its .pc file's Cflags), which changes
# the layout of httplib::ClientImpl: every user must define it too, or an httplib::Client corrupts the
# heap (seen as a double free in [serve]). Its zlib/brotli switches touch only .cc internals.
find_path(VIME_OPENSSL_INCLUDE_DIR openssl/ssl.h REQUIRED)
set_property(TARGET vime::httplib APPEND PROPERTY INTERFACE_COMPILE_DEFINITIONS CPPHTTPLIB_OPENSSL_SUPPORT)
set_property(TARGET vime::httplib APPEND PROPERTY INTERFACE_INCLUDE_DIRECTORIES ${VIME_OPENSSL_INCLUDE_DIR})

# PyTorch's wheel exports its own, older std::filesystem from libtorch_cpu.so. A target whose link line names
# libtorch before the C++ runtime binds std::filesystem calls to that copy and crashes in the first remove_all
# (seen on the GPU machine, where g++ links libstdc++ statically). Link LibTorch through this list, which
# names libstdc++ first, so every std:: symbol comes from the C++ runtime.
set(VIME_TORCH_LIBRARIES stdc++ torch)
