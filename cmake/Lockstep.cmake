# Build helpers: every Lockstep target gets its flags from lockstep_flags
# (warnings, sanitizers) and its include root per target, never globally.

# The flags of every Lockstep target; link it PRIVATE.
add_library(lockstep_flags INTERFACE)
target_compile_options(lockstep_flags INTERFACE -Wall -Wextra
                       $<$<BOOL:${LOCKSTEP_WERROR}>:-Werror>)
if(LOCKSTEP_SANITIZER STREQUAL "address")
  target_compile_options(lockstep_flags INTERFACE
    -fsanitize=address,undefined -fno-omit-frame-pointer
    -fno-sanitize-recover=undefined
    # GCC 12 reports false maybe-uninitialized warnings inside libstdc++'s
    # std::regex and std::function once sanitizers instrument them.
    -Wno-maybe-uninitialized)
  target_link_options(lockstep_flags INTERFACE -fsanitize=address,undefined)
elseif(LOCKSTEP_SANITIZER STREQUAL "thread")
  target_compile_options(lockstep_flags INTERFACE -fsanitize=thread
                         -fno-omit-frame-pointer -Wno-maybe-uninitialized
                         # GCC warns that TSan does not model fences.
                         -Wno-tsan)
  target_link_options(lockstep_flags INTERFACE -fsanitize=thread)
  # Function clones pick their body in an IFUNC resolver, which runs
  # before ThreadSanitizer's runtime is up and crashes the binary at load.
  target_compile_definitions(lockstep_flags INTERFACE
                             LOCKSTEP_NO_TARGET_CLONES)
elseif(LOCKSTEP_SANITIZER STREQUAL "fuzzer")
  # libFuzzer (clang only): every target carries its coverage counters and
  # ASan + UBSan; the fuzz targets alone link libFuzzer's main
  # (tests/fuzz/).
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "LOCKSTEP_SANITIZER=fuzzer needs clang++ "
                        "(scripts/fuzz.sh configures it)")
  endif()
  target_compile_options(lockstep_flags INTERFACE
    -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer
    -fno-sanitize-recover=undefined)
  target_link_options(lockstep_flags INTERFACE -fsanitize=address,undefined)
elseif(NOT LOCKSTEP_SANITIZER STREQUAL "")
  message(FATAL_ERROR "LOCKSTEP_SANITIZER must be empty, address, thread "
                      "or fuzzer, not '${LOCKSTEP_SANITIZER}'")
endif()

# lockstep_library(NAME [SOURCES files...] [SUBDIRS dirs...] [DEPS ...]):
# the static library lockstep_NAME (alias lockstep::NAME). SOURCES default
# to the folder's .cc files (plus those of SUBDIRS, for a component with
# backends in subfolders) minus the *_main.cc entry points of binaries.
function(lockstep_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;SUBDIRS;DEPS" ${ARGN})
  set(sources ${ARG_SOURCES})
  if(NOT sources)
    file(GLOB sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cc)
    foreach(sub ${ARG_SUBDIRS})
      file(GLOB more CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/${sub}/*.cc)
      list(APPEND sources ${more})
    endforeach()
    list(FILTER sources EXCLUDE REGEX "_main\\.cc$")
  endif()
  add_library(lockstep_${name} STATIC ${sources})
  add_library(lockstep::${name} ALIAS lockstep_${name})
  # Includes are written from the repository root.
  target_include_directories(lockstep_${name} PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(lockstep_${name} PUBLIC ${ARG_DEPS}
                        PRIVATE lockstep_flags)
  # Unity batches: the headers a folder's files share (the generated
  # schema, ZeroMQ, Boost) are parsed once per batch, not once per file.
  # Batches of 16 build the release tree in 145 s on 2 cores (197 s with
  # batches of 6); names in anonymous namespaces must differ per folder.
  set_target_properties(lockstep_${name} PROPERTIES
                        UNITY_BUILD ${LOCKSTEP_UNITY_BUILD}
                        UNITY_BUILD_BATCH_SIZE 16)
endfunction()

# lockstep_binary(NAME SOURCES files... DEPS targets...): an executable in
# build/bin.
function(lockstep_binary name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} lockstep_flags)
  set_target_properties(${name} PROPERTIES
                        UNITY_BUILD ${LOCKSTEP_UNITY_BUILD}
                        UNITY_BUILD_BATCH_SIZE 16)
endfunction()

# lockstep_test_suite(NAME DEPS targets... [LABEL l] [TIMEOUT s]
# [SUBDIRS dirs...] [SOURCES files...]): one GoogleTest binary NAME_tests in
# build/bin from the *_test.cc files of the folder and of SUBDIRS (the tests
# of a component's backends), or SOURCES; each test case is its own
# CTest test "NAME.Suite.Case", labelled LABEL (default NAME). Discovery
# runs at test time, so a build never runs a test binary. With
# LOCKSTEP_TEST_SHARDS=N (the sanitizer presets) the binary is instead N
# CTest tests "NAME.shard-I", each running every Nth case.
function(lockstep_test_suite name)
  cmake_parse_arguments(ARG "" "LABEL;TIMEOUT" "SOURCES;SUBDIRS;DEPS" ${ARGN})
  set(sources ${ARG_SOURCES})
  if(NOT sources)
    file(GLOB sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*_test.cc)
    foreach(sub ${ARG_SUBDIRS})
      file(GLOB more CONFIGURE_DEPENDS
           ${CMAKE_CURRENT_SOURCE_DIR}/${sub}/*_test.cc)
      list(APPEND sources ${more})
    endforeach()
  endif()
  if(NOT ARG_LABEL)
    set(ARG_LABEL ${name})
  endif()
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  add_executable(${name}_tests ${sources})
  target_link_libraries(${name}_tests PRIVATE ${ARG_DEPS} GTest::gtest
                        GTest::gmock GTest::gtest_main lockstep_flags)
  target_include_directories(${name}_tests PRIVATE ${PROJECT_SOURCE_DIR})
  # A folder's test files compile as a few unity batches, so the headers
  # they share (gtest, gmock, ZeroMQ, the generated schema) are parsed once
  # per batch instead of once per file.
  set_target_properties(${name}_tests PROPERTIES
                        UNITY_BUILD ${LOCKSTEP_UNITY_BUILD}
                        UNITY_BUILD_BATCH_SIZE 16)
  # Test bodies need no optimisation (the code they test keeps its own)
  # and line tables are enough for their backtraces: -Og -g1 compiles them
  # in about three quarters of the time of -O2 -g, and -O0 in the
  # sanitizer builds in about half the time of -O1.
  if(CMAKE_BUILD_TYPE STREQUAL "RelWithDebInfo")
    target_compile_options(${name}_tests PRIVATE -Og -g1)
  elseif(LOCKSTEP_SANITIZER)
    target_compile_options(${name}_tests PRIVATE -O0 -g1)
  endif()
  if(LOCKSTEP_TEST_SHARDS GREATER 0)
    # A sanitizer runtime takes ~0.1 s to start a binary, which is most of
    # the time of most cases: the binary runs as a few GoogleTest shards
    # instead (the ASan pass in a third of the time).
    math(EXPR last "${LOCKSTEP_TEST_SHARDS} - 1")
    foreach(shard RANGE ${last})
      add_test(NAME ${name}.shard-${shard} COMMAND ${name}_tests)
      set(env GTEST_TOTAL_SHARDS=${LOCKSTEP_TEST_SHARDS}
              GTEST_SHARD_INDEX=${shard})
      if(LOCKSTEP_TEST_FILTER)
        list(APPEND env GTEST_FILTER=${LOCKSTEP_TEST_FILTER})
      endif()
      set_tests_properties(${name}.shard-${shard} PROPERTIES
        LABELS "${ARG_LABEL}" TIMEOUT ${ARG_TIMEOUT} ENVIRONMENT "${env}")
    endforeach()
  else()
    gtest_discover_tests(${name}_tests TEST_PREFIX "${name}."
                         DISCOVERY_MODE PRE_TEST DISCOVERY_TIMEOUT 60
                         PROPERTIES LABELS "${ARG_LABEL}"
                                    TIMEOUT ${ARG_TIMEOUT})
  endif()
endfunction()

# lockstep_forbid_dependency(TARGET FORBIDDEN...): fails the configure step
# when TARGET links any FORBIDDEN target, directly or through its
# dependencies. The layering rules of docs/development.md are checked this
# way (the sync policies and common/ never see FlatBuffers).
function(lockstep_forbid_dependency target)
  set(seen)
  set(queue ${target})
  while(queue)
    list(POP_FRONT queue current)
    if(current IN_LIST seen OR NOT TARGET ${current})
      continue()
    endif()
    list(APPEND seen ${current})
    get_target_property(aliased ${current} ALIASED_TARGET)
    if(aliased)
      list(APPEND queue ${aliased})
      continue()
    endif()
    if(current IN_LIST ARGN)
      message(FATAL_ERROR "${target} must not depend on ${current} "
                          "(docs/development.md, layering)")
    endif()
    get_target_property(type ${current} TYPE)
    set(deps)
    if(NOT type STREQUAL "INTERFACE_LIBRARY")
      get_target_property(direct ${current} LINK_LIBRARIES)
      if(direct)
        list(APPEND deps ${direct})
      endif()
    endif()
    get_target_property(iface ${current} INTERFACE_LINK_LIBRARIES)
    if(iface)
      list(APPEND deps ${iface})
    endif()
    foreach(dep ${deps})
      # Generator expressions such as $<LINK_ONLY:x> name x.
      string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" dep "${dep}")
      list(APPEND queue ${dep})
    endforeach()
  endwhile()
endfunction()
