# The `layers` test: fails when a file of lib/vime/<area>/ includes "vime/<other>/..." of an area
# that <area>'s vime_area() call does not reach through its DEPS (the closure, see VimeArea.cmake),
# when a public header (lib/include/vime/, the plugin ABI) or a plugin of the tree (plugins/,
# rm_hub/, filter_hub/: built as an out-of-tree plugin would be) includes any lib/vime/ header, or
# when a directory of lib/vime/ is no declared area.
#
#   cmake -DVIME_SOURCE_DIR=<repo> -DVIME_LAYERS=<build>/vime_layers.cmake -P cmake/check_layers.cmake
cmake_minimum_required(VERSION 3.25)
if(NOT VIME_SOURCE_DIR OR NOT VIME_LAYERS)
  message(FATAL_ERROR "usage: cmake -DVIME_SOURCE_DIR=<repo> -DVIME_LAYERS=<build>/vime_layers.cmake "
                      "-P check_layers.cmake")
endif()
include(${VIME_LAYERS})  # VIME_AREAS, VIME_AREA_ALLOWED_<area>

# "vime/<area>/...", also behind a relative path ("../../lib/vime/<area>/...").
set(include_re "^[ \t]*#[ \t]*include[ \t]*[<\"]([^\">]*/)?vime/([A-Za-z0-9_]+)/[^\">]*[\">]")
set(violations "")

# Appends "<file>:<line>: <include>: <why>" for each include of an area not in `allowed` (a list).
function(check_file file area allowed why)
  file(STRINGS ${VIME_SOURCE_DIR}/${file} includes REGEX "${include_re}")
  foreach(line IN LISTS includes)
    string(REGEX MATCH "${include_re}" ignored "${line}")
    if(CMAKE_MATCH_2 STREQUAL area OR CMAKE_MATCH_2 IN_LIST allowed)
      continue()
    endif()
    file(READ ${VIME_SOURCE_DIR}/${file} text)  # only for a violation: its line number
    string(FIND "${text}" "${line}" at)
    string(SUBSTRING "${text}" 0 ${at} before)
    string(REGEX MATCHALL "\n" newlines "${before}")
    list(LENGTH newlines number)
    math(EXPR number "${number} + 1")
    string(STRIP "${line}" line)
    string(APPEND violations "${file}:${number}: ${line}: ${why}\n")
  endforeach()
  set(violations "${violations}" PARENT_SCOPE)
endfunction()

file(GLOB dirs RELATIVE ${VIME_SOURCE_DIR}/lib/vime LIST_DIRECTORIES true ${VIME_SOURCE_DIR}/lib/vime/*)
foreach(dir IN LISTS dirs)
  if(IS_DIRECTORY ${VIME_SOURCE_DIR}/lib/vime/${dir} AND NOT dir IN_LIST VIME_AREAS)
    string(APPEND violations "lib/vime/${dir}/: no vime_area(NAME ${dir} ...) in lib/CMakeLists.txt\n")
  endif()
endforeach()

set(checked 0)
foreach(area IN LISTS VIME_AREAS)
  set(allowed ${VIME_AREA_ALLOWED_${area}})
  if(allowed)
    string(REPLACE ";" " " may "${allowed}")
  else()
    set(may "none")
  endif()
  file(GLOB_RECURSE files RELATIVE ${VIME_SOURCE_DIR} ${VIME_SOURCE_DIR}/lib/vime/${area}/*)
  foreach(file IN LISTS files)
    if(file MATCHES "\\.(hpp|cpp|h|inc)$")
      check_file(${file} ${area} "${allowed}"
                 "area ${area} may include only public <vime/*.hpp>, its own and these areas' headers: ${may}")
      math(EXPR checked "${checked} + 1")
    endif()
  endforeach()
endforeach()

file(GLOB_RECURSE public RELATIVE ${VIME_SOURCE_DIR} ${VIME_SOURCE_DIR}/lib/include/vime/*)
foreach(file IN LISTS public)
  check_file(${file} "" "" "a public header (the plugin ABI) may include only public <vime/*.hpp> headers")
  math(EXPR checked "${checked} + 1")
endforeach()

foreach(dir plugins rm_hub filter_hub)
  file(GLOB_RECURSE files RELATIVE ${VIME_SOURCE_DIR} ${VIME_SOURCE_DIR}/${dir}/*)
  foreach(file IN LISTS files)
    if(file MATCHES "\\.(hpp|cpp|h|inc)$")
      check_file(${file} "" "" "a plugin may include only the public <vime/*.hpp> headers (the ones installed)")
      math(EXPR checked "${checked} + 1")
    endif()
  endforeach()
endforeach()

if(violations)
  string(STRIP "${violations}" violations)
  message(NOTICE "${violations}")  # one line each, unwrapped (FATAL_ERROR reflows its text)
  message(FATAL_ERROR "layers: the includes above cross areas that lib/CMakeLists.txt's vime_area() "
                      "calls do not declare (add a DEPS only where the layers allow it), or reach "
                      "past the public headers (give a plugin what it needs in lib/include/vime/)")
endif()
list(LENGTH VIME_AREAS n)
message(STATUS "layers: ${checked} files of ${n} areas, the public headers and the plugins include only "
               "what their areas declare")
