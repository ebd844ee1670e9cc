# vime_add_plugin(<name> <sources>...): a vime plugin as a MODULE library lib<name>.so that links libvime.
# Used in-tree (rm_hub, filter_hub, plugins, tests) and by out-of-tree plugins after find_package(vime).
function(vime_add_plugin name)
  add_library(${name} MODULE ${ARGN})
  if(TARGET vime::vime)
    target_link_libraries(${name} PRIVATE vime::vime)
  else()
    target_link_libraries(${name} PRIVATE vime)
  endif()
  set_target_properties(${name} PROPERTIES CXX_STANDARD 20 CXX_STANDARD_REQUIRED ON
                                           CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
endfunction()
