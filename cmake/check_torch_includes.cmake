# The `torch_includes` test: each file that uses one of the LibTorch names below includes, itself,
# a header that declares it. LibTorch 1.13's <ATen/ATen.h> pulled most of them in; 2.x's does not
# (at::NoGradGuard without <ATen/core/grad_mode.h> compiles here against Debian's 1.13 and fails on
# a CUDA machine's 2.x), so relying on ATen.h's transitive includes breaks only the GPU build.
#
#   cmake -DVIME_SOURCE_DIR=<repo> -P cmake/check_torch_includes.cmake
cmake_minimum_required(VERSION 3.25)
if(NOT VIME_SOURCE_DIR)
  message(FATAL_ERROR "usage: cmake -DVIME_SOURCE_DIR=<repo> -P check_torch_includes.cmake")
endif()

# <name regex>|<headers that declare it, any one of them>. <torch/torch.h> and <torch/all.h>
# bring everything.
set(rules
  "(NoGradGuard|AutoGradMode|GradMode::)|ATen/core/grad_mode.h c10/core/GradMode.h torch/csrc/api/include/torch/types.h"
  "InferenceMode|c10/core/InferenceMode.h"
  "(CPUGeneratorImpl|getDefaultCPUGenerator)|ATen/CPUGeneratorImpl.h"
  "(OptionalDeviceGuard|c10::DeviceGuard|[^:a-zA-Z]DeviceGuard )|c10/core/DeviceGuard.h ATen/DeviceGuard.h"
  "(getCurrentCUDAStream|getStreamFromPool|CUDAStreamGuard)|c10/cuda/CUDAStream.h c10/cuda/CUDAGuard.h ATen/cuda/CUDAContext.h"
  "c10::cuda::CUDAGuard|c10/cuda/CUDAGuard.h"
  "CUDACachingAllocator|c10/cuda/CUDACachingAllocator.h"
  "at::cuda::CUDAGraph|ATen/cuda/CUDAGraph.h"
  "getDeviceProperties|ATen/cuda/CUDAContext.h"
  "(torch::autograd::Function|AutogradContext)|torch/autograd.h torch/csrc/autograd/custom_function.h"
  "at::indexing::|ATen/TensorIndexing.h"
  "c10::irange|c10/util/irange.h"
  "c10::StreamGuard|c10/core/StreamGuard.h"
  "c10::Event|c10/core/Event.h")

set(include_re "^[ \t]*#[ \t]*include[ \t]*<([^>]+)>")
set(violations "")
set(checked 0)
file(GLOB_RECURSE files RELATIVE ${VIME_SOURCE_DIR}
     ${VIME_SOURCE_DIR}/lib/*.cpp ${VIME_SOURCE_DIR}/lib/*.hpp ${VIME_SOURCE_DIR}/lib/*.cu
     ${VIME_SOURCE_DIR}/lib/*.cuh ${VIME_SOURCE_DIR}/apps/*.cpp ${VIME_SOURCE_DIR}/apps/*.hpp
     ${VIME_SOURCE_DIR}/tests/*.cpp ${VIME_SOURCE_DIR}/tests/*.hpp ${VIME_SOURCE_DIR}/tools/*.cpp
     ${VIME_SOURCE_DIR}/tools/*.hpp ${VIME_SOURCE_DIR}/plugins/*.cpp ${VIME_SOURCE_DIR}/rm_hub/*.cpp
     ${VIME_SOURCE_DIR}/filter_hub/*.cpp)
foreach(file IN LISTS files)
  file(READ ${VIME_SOURCE_DIR}/${file} text)
  # Comments do not count as uses.
  string(REGEX REPLACE "//[^\n]*" "" code "${text}")
  if(NOT code MATCHES "(at|c10|torch)::")
    continue()
  endif()
  math(EXPR checked "${checked} + 1")
  file(STRINGS ${VIME_SOURCE_DIR}/${file} include_lines REGEX "${include_re}")
  set(included "")
  foreach(line IN LISTS include_lines)
    string(REGEX MATCH "${include_re}" ignored "${line}")
    list(APPEND included "${CMAKE_MATCH_1}")
  endforeach()
  if("torch/torch.h" IN_LIST included OR "torch/all.h" IN_LIST included)
    continue()
  endif()
  foreach(rule IN LISTS rules)
    string(FIND "${rule}" "|" bar REVERSE)
    string(SUBSTRING "${rule}" 0 ${bar} name_re)
    math(EXPR after "${bar} + 1")
    string(SUBSTRING "${rule}" ${after} -1 headers)
    if(NOT code MATCHES "${name_re}")
      continue()
    endif()
    set(found FALSE)
    string(REPLACE " " ";" header_list "${headers}")
    foreach(header IN LISTS header_list)
      if(header IN_LIST included)
        set(found TRUE)
      endif()
    endforeach()
    if(NOT found)
      string(REGEX MATCH "${name_re}" name "${code}")
      string(APPEND violations "${file}: uses ${name} but includes none of <${headers}>\n")
    endif()
  endforeach()
endforeach()

if(violations)
  message(FATAL_ERROR "torch_includes: include what you use (LibTorch 2.x's ATen.h does not bring "
                      "these in):\n${violations}")
endif()
message(STATUS "torch_includes: ${checked} files use LibTorch; each includes what it uses")
