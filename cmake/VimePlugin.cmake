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

# vime_add_builtin_plugin(<name> <sources>...): one of vime's own plugins (rm_hub, filter_hub), placed
# beside libvime in <libdir>/vime/ where vime::plugin::builtin_plugin_path() finds it.
function(vime_add_builtin_plugin name)
  vime_add_plugin(${name} ${ARGN})
  set_target_properties(${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib/vime)
  install(TARGETS ${name} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/vime)
endfunction()
