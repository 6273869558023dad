# Precompiled headers: the header-only libraries (nlohmann-json, fmt, gtest, CLI11) dominate the
# compile time of a small translation unit, and CI builds the tree twice on 2 cores. Targets of one
# kind compile with the same flags, so they share one header: the first target of a kind builds
# it (`layer`: genai_core; `test`: genai_test_support), the others reuse it (a header per target cost
# about 230 CPU-seconds per tree).
option(GENAI_PCH "Precompile the heavy third-party headers" ON)
# genai_precompile(<target> <kind> [headers...]): the headers count only for a kind's first target,
# which every later target of the kind then depends on (so it is one they all need anyway:
# genai_core for the layers, genai_test_support for the suites).
function(genai_precompile target kind)
  if(NOT GENAI_PCH)
    return()
  endif()
  get_property(_owner GLOBAL PROPERTY GENAI_PCH_OWNER_${kind})
  if(_owner)
    target_precompile_headers(${target} REUSE_FROM ${_owner})
  else()
    target_precompile_headers(${target} PRIVATE <string> <vector> <map> <memory> <functional> ${ARGN})
    set_property(GLOBAL PROPERTY GENAI_PCH_OWNER_${kind} ${target})
  endif()
endfunction()

# Control-plane layers run once per command: they read options, make plans, write reports and
# drive the stages; nothing in them loops over tensors. They compile at -O1 in an optimized tree
# (-O3 spends most of a control-plane unit's compile time inlining nlohmann-json and fmt, for
# code that runs for milliseconds) and at -O0 in the sanitizer tree (ASan+UBSan double the
# optimizer's work). The layers with the hot loops (kernels, formats, tokenizer, model, graph,
# quant, compile's packing, pte, runtime, backends, llm) keep the tree's optimization; in the
# sanitizer tree, compile, pte and runtime are -O0 too (their suites run in seconds there).
set(GENAI_CONTROL_PLANE_LAYERS options pipeline target modality eval orchestrator)
# (modality stays at -O1 under the sanitizers: at -O0 its encoders' glue made the multimodal
# parity suites slower by more than it saved.)
set(GENAI_SANITIZER_O0_LAYERS options pipeline target eval orchestrator compile pte runtime)
# The layers genai_control_plane() lowers the optimization of, in this tree.
if(GENAI_SANITIZE)
  set(GENAI_LOW_OPT_LAYERS ${GENAI_SANITIZER_O0_LAYERS})
else()
  set(GENAI_LOW_OPT_LAYERS ${GENAI_CONTROL_PLANE_LAYERS})
endif()
# genai_control_plane(<target>): the optimization of a control-plane target (the layers above and
# the genai executable, src/cli). Returns in <out_pch_kind> the precompiled-header kind to use:
# a header precompiled at one -O level is invalid at another.
function(genai_control_plane target out_pch_kind)
  if(GENAI_SANITIZE)
    target_compile_options(${target} PRIVATE -O0)
    set(${out_pch_kind} O0 PARENT_SCOPE)
  elseif(CMAKE_BUILD_TYPE MATCHES "^(Release|RelWithDebInfo|MinSizeRel)$")
    target_compile_options(${target} PRIVATE -O1)
    set(${out_pch_kind} O1 PARENT_SCOPE)
  else()
    set(${out_pch_kind} "" PARENT_SCOPE)
  endif()
endfunction()

# genai_layer(<name> [DEPS targets...])
# Builds every .cpp in the calling folder into the static library genai_<name>.
# A layer only lists the layers and libraries directly below it: a genai_<layer> DEP that is not
# before <name> in GENAI_LAYER_NAMES is a configure error.
function(genai_layer name)
  cmake_parse_arguments(ARG "" "" "DEPS" ${ARGN})
  list(FIND GENAI_LAYER_NAMES ${name} _pos)
  if(_pos LESS 0)
    message(FATAL_ERROR "genai_layer(${name}): '${name}' is not in GENAI_LAYER_NAMES (top CMakeLists.txt)")
  endif()
  foreach(_dep ${ARG_DEPS})
    if(_dep MATCHES "^genai_(.+)$")
      list(FIND GENAI_LAYER_NAMES ${CMAKE_MATCH_1} _dep_pos)
      if(_dep_pos GREATER_EQUAL _pos)
        message(FATAL_ERROR "genai_layer(${name}): DEP ${_dep} is not below '${name}' in GENAI_LAYER_NAMES "
                            "(${GENAI_LAYER_NAMES}); a layer depends only on layers below it")
      endif()
    endif()
  endforeach()
  file(GLOB _srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp)
  if(_srcs)
    add_library(genai_${name} STATIC ${_srcs})
    target_include_directories(genai_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
    target_link_libraries(genai_${name} PUBLIC ${ARG_DEPS})
    set(_pch_kind layer)
    if(name IN_LIST GENAI_LOW_OPT_LAYERS)
      genai_control_plane(genai_${name} _level)
      set(_pch_kind layer${_level})
    endif()
    genai_precompile(genai_${name} ${_pch_kind} <fmt/format.h> <nlohmann/json.hpp>)
  else()  # headers only so far
    add_library(genai_${name} INTERFACE)
    target_include_directories(genai_${name} INTERFACE ${PROJECT_SOURCE_DIR}/src)
    target_link_libraries(genai_${name} INTERFACE ${ARG_DEPS})
  endif()
endfunction()

# Test code is thin: it sets up inputs and calls the layers, which keep the tree's optimization.
# Compiling it at -O1 in a release tree (-O0 in the sanitizer tree, where UBSan and ASan make the
# optimizer's work twice as expensive) halves the CPU time of the largest part of a CI build.
# (-O0 in the release tree too saved CI less compile time than its suites then took longer to
# run: header templates instantiated in test code, such as the checks of rotations, run there.)
# Other build types (a developer's Debug tree) keep their own flags.
# In the sanitizer tree test code keeps ASan but not UBSan: UBSan's checks of the tests' own
# arithmetic were a third of a suite unit's compile time (test_runtime's first unit, twice each
# on an idle machine: 44.8 and 40.6 s with them, 35.1 and 25.6 s without), while the layers the
# tests call keep both. (An inline function of a layer's header that a test also instantiates
# may then link as the test's unchecked copy; where a layer inlines it, as at -O1, its own copy
# is checked.)
function(genai_test_optimization target)
  if(GENAI_SANITIZE)
    target_compile_options(${target} PRIVATE -O0 -fno-sanitize=undefined)
  elseif(CMAKE_BUILD_TYPE MATCHES "^(Release|RelWithDebInfo|MinSizeRel)$")
    target_compile_options(${target} PRIVATE -O1)
  endif()
endfunction()

# genai_test_suite(<name> [DIR folder] [DEPS targets...] [WITHOUT_CLI] [ONE_PROCESS fixtures...])
# Builds tests/<folder>/*.cpp (folder: <name> by default; a part of a layer has its own, e.g.
# backends/qnn for the suite backends_qnn) into one GoogleTest binary and registers its tests.
# WITHOUT_CLI: a suite that neither runs genai nor uses tests/support, so building it builds only
# its DEPS (the kernel suite, which CI's aarch64 stage builds alone).
# ONE_PROCESS: GoogleTest fixtures whose SetUpTestSuite compiles programs for all their tests.
# CTest runs every discovered test in a process of its own, which would redo that setup for each
# test (LoadVerification's eleven tests spent about two thirds of their 102 s under the sanitizers
# in it); each of these fixtures is one CTest entry, <Fixture>.InOneProcess, running its tests in
# one process as GoogleTest means a fixture to run, its failures named test by test in the output.
# Their Slow and Long tests stay entries of their own.
function(genai_test_suite name)
  cmake_parse_arguments(ARG "WITHOUT_CLI" "DIR" "DEPS;ONE_PROCESS" ${ARGN})
  if(NOT ARG_DIR)
    set(ARG_DIR ${name})
  endif()
  file(GLOB _srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/${ARG_DIR}/*.cpp)
  if(NOT _srcs)
    return()
  endif()
  add_executable(test_${name} ${_srcs})
  target_link_libraries(test_${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main GTest::gmock)
  target_include_directories(test_${name} PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/tests)
  genai_test_optimization(test_${name})
  if(NOT ARG_WITHOUT_CLI)
    genai_precompile(test_${name} test <gtest/gtest.h> <fmt/format.h> <nlohmann/json.hpp>)
    add_dependencies(test_${name} genai)
  endif()
  # CTest runs tests in descending COST, where it has no times of an earlier run (a clean clone)
  # else in the order they are defined: Slow tests (10-70 s) and one-process fixtures start first,
  # so that none of them is left running alone on one core at the end of the run.
  # Labels come from test names, so what a test costs is stated where it is written:
  #   Suite.Long<Name>  label "long": long sweeps, only `ctest -L long` runs them;
  #   Suite.Slow<Name>  label "nosan": release tree only (minutes under the sanitizers);
  #   anything else     the default suite, in both trees, labelled with its suite's name.
  # (One label each: the generated set_tests_properties() cannot take a list.)
  set(_one_process_filter "")
  foreach(_fixture ${ARG_ONE_PROCESS})
    set(_found FALSE)
    foreach(_src ${_srcs})
      file(STRINGS ${_src} _hits REGEX "^TEST_F\\(${_fixture}, ")
      list(FILTER _hits EXCLUDE REGEX ", (Slow|Long)")
      if(_hits)
        set(_found TRUE)
      endif()
    endforeach()
    if(NOT _found)
      message(FATAL_ERROR "genai_test_suite(${name}): ONE_PROCESS fixture ${_fixture} has no TEST_F in "
                          "tests/${ARG_DIR} but Slow or Long ones: its entry would run nothing")
    endif()
    string(APPEND _one_process_filter ":${_fixture}.*")
    add_test(NAME ${_fixture}.InOneProcess COMMAND test_${name} "--gtest_filter=${_fixture}.*-*.Long*:*.Slow*"
             WORKING_DIRECTORY ${PROJECT_BINARY_DIR})
    # A test skipped inside the process makes the entry Skipped, as a discovered test would be:
    # it must not read as Passed.
    set_tests_properties(${_fixture}.InOneProcess PROPERTIES LABELS ${name} COST 50
                         SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]")
  endforeach()
  gtest_discover_tests(test_${name} TEST_FILTER "-*.Long*:*.Slow*${_one_process_filter}"
    WORKING_DIRECTORY ${PROJECT_BINARY_DIR}
    PROPERTIES LABELS ${name}
    DISCOVERY_TIMEOUT 60)
  gtest_discover_tests(test_${name} TEST_FILTER "*.Long*"
    WORKING_DIRECTORY ${PROJECT_BINARY_DIR}
    PROPERTIES LABELS long TIMEOUT 3600
    DISCOVERY_TIMEOUT 60)
  gtest_discover_tests(test_${name} TEST_FILTER "*.Slow*"
    WORKING_DIRECTORY ${PROJECT_BINARY_DIR}
    PROPERTIES LABELS nosan COST 100
    DISCOVERY_TIMEOUT 60)
endfunction()
