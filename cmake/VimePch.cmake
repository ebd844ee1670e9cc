# A precompiled <ATen/ATen.h> for the translation units that include it (VIME_PCH, ON by default).
# Parsing and instantiating ATen.h is most of a LibTorch TU's compile time; loaded from a .gch it
# costs a fixed ~1.5 CPU-seconds instead. Only the TUs that reach <ATen/ATen.h> through their own
# includes get it (a configure-time scan, vime_pch_reaches_torch): a torch-free TU would only pay
# the load, and a TU that gets it includes ATen.h itself, so the forced include only moves ATen.h
# to its first line (a VIME_PCH=OFF build compiles the same sources). docs/development.md, "Build
# time", has the measurements.
#
# Two headers are compiled, one per code model, since GCC rejects a .gch made with other
# -fPIC/-fPIE settings: vime_pch_pic for libvime's areas and the plugins, vime_pch_exe for
# executables and static libraries. Every other target reuses one (REUSE_FROM). C++ only: a .cu
# source never gets it, so nvcc sees no C++ PCH.
#
# The PCH holds <ATen/ATen.h> alone: headers that LibTorch 2.x's ATen.h no longer brings in
# (<ATen/core/grad_mode.h>, ...) stay out of it, so a file that forgets one still fails on 2.x, and
# the `torch_includes` test, which reads the sources, still names it.
option(VIME_PCH "Precompile <ATen/ATen.h> for the sources that include it" ON)

# The two headers' targets. Each compiles a stub source with the header (~1.5 CPU-seconds): CMake
# writes no PCH for a target whose every source skips it.
if(VIME_PCH)
  set(stub ${PROJECT_BINARY_DIR}/vime_pch_stub.cpp)
  file(CONFIGURE OUTPUT ${stub} CONTENT "// the precompiled ATen.h's target needs a source\n")
  foreach(model pic exe)
    add_library(vime_pch_${model} OBJECT ${stub})
    target_link_libraries(vime_pch_${model} PRIVATE ${VIME_TORCH_LIBRARIES})
    target_precompile_headers(vime_pch_${model} PRIVATE
                              "$<$<COMPILE_LANGUAGE:CXX>:<ATen/ATen.h$<ANGLE-R>>")
  endforeach()
  set_target_properties(vime_pch_pic PROPERTIES POSITION_INDEPENDENT_CODE ON)
endif()

# Where quoted and <vime/...> includes of the project's own headers are looked up (besides the
# including file's directory).
set(VIME_PCH_INCLUDE_ROOTS ${PROJECT_SOURCE_DIR}/lib ${PROJECT_SOURCE_DIR}/lib/include
    ${PROJECT_SOURCE_DIR}/tests ${PROJECT_SOURCE_DIR})
# An include that makes a file a LibTorch TU: ATen.h or a torch/ header that includes it (c10d's
# TCPStore.hpp, <torch/version.h> and <torch/cuda.h> do not).
set(VIME_PCH_TORCH_INCLUDE_RE "^(ATen/ATen\\.h|torch/(torch|all)\\.h|torch/csrc/autograd/)")

# Sets <out> to TRUE when <file> (absolute) reaches a LibTorch include through the project's
# headers.
# Results are memoized per file for the whole configure run.
function(vime_pch_reaches_torch file out)
  get_property(known GLOBAL PROPERTY "VIME_PCH_SCAN:${file}" SET)
  if(known)
    get_property(result GLOBAL PROPERTY "VIME_PCH_SCAN:${file}")
    set(${out} ${result} PARENT_SCOPE)
    return()
  endif()
  set_property(GLOBAL PROPERTY "VIME_PCH_SCAN:${file}" FALSE)  # an include cycle ends here
  set(result FALSE)
  get_filename_component(dir ${file} DIRECTORY)
  file(STRINGS ${file} lines REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"]")
  foreach(line IN LISTS lines)
    string(REGEX MATCH "include[ \t]*[<\"]([^\">]+)[\">]" ignored "${line}")
    set(include ${CMAKE_MATCH_1})
    if(include MATCHES "${VIME_PCH_TORCH_INCLUDE_RE}")
      set(result TRUE)
      break()
    endif()
    foreach(root IN ITEMS ${dir} ${VIME_PCH_INCLUDE_ROOTS})
      if(EXISTS ${root}/${include} AND NOT IS_DIRECTORY ${root}/${include})
        get_filename_component(header ${root}/${include} REALPATH)
        vime_pch_reaches_torch(${header} reaches)
        if(reaches)
          set(result TRUE)
        endif()
        break()
      endif()
    endforeach()
    if(result)
      break()
    endif()
  endforeach()
  set_property(GLOBAL PROPERTY "VIME_PCH_SCAN:${file}" ${result})
  set(${out} ${result} PARENT_SCOPE)
endfunction()

# Appends the build-system targets of <dir> and its subdirectories to <out>.
function(vime_pch_collect_targets dir out)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub IN LISTS subdirs)
    vime_pch_collect_targets(${sub} more)
    list(APPEND targets ${more})
  endforeach()
  set(${out} ${targets} PARENT_SCOPE)
endfunction()

# Gives every target of the project that compiles LibTorch TUs the precompiled ATen.h, and marks its
# other sources SKIP_PRECOMPILE_HEADERS. Called once, at the end of the top-level CMakeLists.txt, so
# targets and sources added anywhere get it without a line of their own.
function(vime_precompile_torch_headers)
  if(NOT VIME_PCH)
    message(STATUS "VIME_PCH=OFF: no precompiled ATen.h")
    return()
  endif()
  vime_pch_collect_targets(${PROJECT_SOURCE_DIR} targets)
  set(users 0)
  set(torch_sources 0)
  foreach(target IN LISTS targets)
    get_target_property(type ${target} TYPE)
    if(NOT type MATCHES "^(EXECUTABLE|SHARED_LIBRARY|MODULE_LIBRARY|STATIC_LIBRARY|OBJECT_LIBRARY)$"
       OR target MATCHES "^vime_pch_")
      continue()
    endif()
    get_target_property(pic ${target} POSITION_INDEPENDENT_CODE)
    if(type MATCHES "^(SHARED|MODULE)_LIBRARY$" OR (pic AND NOT type STREQUAL "EXECUTABLE"))
      set(pch vime_pch_pic)
    elseif(NOT pic)
      set(pch vime_pch_exe)
    else()
      continue()  # a -fPIE executable: neither header fits
    endif()
    get_target_property(sources ${target} SOURCES)
    get_target_property(source_dir ${target} SOURCE_DIR)
    set(torch "")
    set(other "")
    foreach(source IN LISTS sources)
      if(source MATCHES "\\$<")
        continue()
      endif()
      cmake_path(ABSOLUTE_PATH source BASE_DIRECTORY ${source_dir} NORMALIZE OUTPUT_VARIABLE path)
      set(reaches FALSE)
      if(path MATCHES "\\.(cpp|cc|cxx)$")  # never a .cu file: nvcc gets no C++ PCH
        vime_pch_reaches_torch(${path} reaches)
      endif()
      if(reaches)
        list(APPEND torch ${path})
      else()
        list(APPEND other ${path})
      endif()
    endforeach()
    if(NOT torch)
      continue()
    endif()
    target_precompile_headers(${target} REUSE_FROM ${pch})
    if(other)
      set_source_files_properties(${other} TARGET_DIRECTORY ${target}
                                  PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
    endif()
    list(LENGTH torch n)
    math(EXPR torch_sources "${torch_sources} + ${n}")
    math(EXPR users "${users} + 1")
  endforeach()
  message(STATUS "VIME_PCH: precompiled ATen.h for ${torch_sources} sources of ${users} targets")
endfunction()
