# Small helpers shared by the host, plugin and test CMakeLists.

# plinth_add_subdirs(DIR [EXCLUDE names...]): add_subdirectory for each direct child of DIR holding a CMakeLists.txt,
# so a new component or plugin folder joins the build without editing this file.
function(plinth_add_subdirs dir)
  cmake_parse_arguments(A "" "" "EXCLUDE" ${ARGN})
  file(GLOB children LIST_DIRECTORIES true RELATIVE ${dir} CONFIGURE_DEPENDS ${dir}/*)
  list(SORT children)
  foreach(child IN LISTS children)
    if(child IN_LIST A_EXCLUDE)
      continue()
    endif()
    if(IS_DIRECTORY ${dir}/${child} AND EXISTS ${dir}/${child}/CMakeLists.txt)
      add_subdirectory(${dir}/${child})
    endif()
  endforeach()
endfunction()

# plinth_host_component(NAME SOURCES... [LIBS ...]): a static library `plinth_<NAME>` that is one
# component of the host (model files, tokenizer, sampling ...). plinth_host links them all.
function(plinth_host_component name)
  cmake_parse_arguments(A "" "" "SOURCES;LIBS" ${ARGN})
  add_library(plinth_${name} STATIC ${A_SOURCES})
  target_include_directories(plinth_${name} PUBLIC ${PROJECT_SOURCE_DIR}/host)
  target_link_libraries(plinth_${name} PUBLIC plinth_sdk ${A_LIBS})
  plinth_warnings(plinth_${name})
  set_property(GLOBAL APPEND PROPERTY PLINTH_HOST_COMPONENTS plinth_${name})
endfunction()

# plinth_add_plugin(NAME SOURCES... [LIBS ...] [TEST_ONLY]): a plugin shared library
# `libplinth_<NAME>.so` in the build tree's plugin folder; installed unless TEST_ONLY.
function(plinth_add_plugin name)
  cmake_parse_arguments(A "TEST_ONLY" "OUTPUT_DIR" "SOURCES;LIBS" ${ARGN})
  add_library(plinth_${name} MODULE ${A_SOURCES})
  target_link_libraries(plinth_${name} PRIVATE plinth_sdk ${A_LIBS})
  set(out ${PLINTH_BUILD_PLUGIN_DIR})
  if(A_OUTPUT_DIR)
    set(out ${A_OUTPUT_DIR})
  endif()
  set_target_properties(plinth_${name} PROPERTIES PREFIX "lib" LIBRARY_OUTPUT_DIRECTORY ${out})
  target_link_options(plinth_${name} PRIVATE
    "LINKER:--version-script=${PROJECT_SOURCE_DIR}/cmake/plugin.map" "LINKER:--no-undefined")
  set_property(TARGET plinth_${name} APPEND PROPERTY LINK_DEPENDS ${PROJECT_SOURCE_DIR}/cmake/plugin.map)
  plinth_warnings(plinth_${name})
  if(NOT A_TEST_ONLY)
    install(TARGETS plinth_${name} LIBRARY DESTINATION ${PLINTH_PLUGIN_INSTALL_DIR})
  endif()
endfunction()

# plinth_add_test(NAME SOURCES... [LIBS ...] [LABELS ...]): a GoogleTest executable registered with
# ctest. Label `unit` runs under the sanitizer build; `integration` needs the real model.
function(plinth_add_test name)
  cmake_parse_arguments(A "" "" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${A_SOURCES})
  target_link_libraries(${name} PRIVATE GTest::gtest GTest::gtest_main ${A_LIBS})
  target_compile_definitions(${name} PRIVATE
    PLINTH_SOURCE_DIR="${PROJECT_SOURCE_DIR}" PLINTH_BUILD_DIR="${PROJECT_BINARY_DIR}"
    PLINTH_PLUGIN_DIR="${PLINTH_BUILD_PLUGIN_DIR}")
  plinth_warnings(${name})
  if(NOT A_LABELS)
    set(A_LABELS unit)
  endif()
  gtest_discover_tests(${name} PROPERTIES LABELS "${A_LABELS}" DISCOVERY_TIMEOUT 60)
endfunction()
