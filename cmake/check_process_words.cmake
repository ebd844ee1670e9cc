# The `process_words` test: code, help texts and test names cite what they mean (slime's file or
# function, vLLM's route) instead of documents outside the repository and the words of the process
# that wrote them: no "spec §N", DESIGN.md, slime_reference.md, vllm_api.md, "design card",
# "[arch-...]" tags or issue numbers in lib/, apps/, plugins/, rm_hub/, filter_hub/, tools/,
# tests/, scripts/ and cmake/ sources (Markdown documents are not checked).
#
#   cmake -DVIME_SOURCE_DIR=<repo> -P cmake/check_process_words.cmake
cmake_minimum_required(VERSION 3.25)
if(NOT VIME_SOURCE_DIR)
  message(FATAL_ERROR "usage: cmake -DVIME_SOURCE_DIR=<repo> -P check_process_words.cmake")
endif()

set(words_re "[Ss]pec §|DESIGN\\.md|slime_reference\\.md|vllm_api\\.md|[Dd]esign card|\\[arch-|[Ii]ssue [0-9]|[Ii]ssue \\[")

set(globs)
foreach(dir lib apps plugins rm_hub filter_hub tools tests scripts cmake)
  foreach(ext cpp hpp h cu cuh py sh cmake txt)
    list(APPEND globs ${VIME_SOURCE_DIR}/${dir}/*.${ext})
  endforeach()
endforeach()
file(GLOB_RECURSE files RELATIVE ${VIME_SOURCE_DIR} ${globs})
list(APPEND files CMakeLists.txt)

set(violations "")
set(checked 0)
foreach(file IN LISTS files)
  if(file STREQUAL "cmake/check_process_words.cmake" OR
     (file MATCHES "\\.txt$" AND NOT file MATCHES "(^|/)CMakeLists\\.txt$"))
    continue()
  endif()
  math(EXPR checked "${checked} + 1")
  file(STRINGS ${VIME_SOURCE_DIR}/${file} lines ENCODING UTF-8 REGEX "${words_re}")
  foreach(line IN LISTS lines)
    string(STRIP "${line}" line)
    string(APPEND violations "${file}: ${line}\n")
  endforeach()
endforeach()

if(violations)
  string(STRIP "${violations}" violations)
  message(NOTICE "${violations}")  # one line each, unwrapped (FATAL_ERROR reflows its text)
  message(FATAL_ERROR "process_words: the lines above cite documents outside the repository or "
                      "process words; cite the slime file or function they mean, or drop them")
endif()
message(STATUS "process_words: ${checked} files cite no documents outside the repository")
