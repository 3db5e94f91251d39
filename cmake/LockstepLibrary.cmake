# lockstep_folder_library(NAME DEPS...): one library per source folder made of
# its .cc files, minus the *_main.cc entry points of the folder's binaries.
function(lockstep_folder_library name)
  file(GLOB sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cc)
  list(FILTER sources EXCLUDE REGEX "_main\\.cc$")
  add_library(${name} ${sources})
  target_link_libraries(${name} PUBLIC ${ARGN})
endfunction()

# lockstep_tests(LIBS...): one GoogleTest executable per *_test.cc in the
# current folder, registered with CTest (labels: the folder name).
function(lockstep_tests)
  file(GLOB tests CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*_test.cc)
  get_filename_component(folder ${CMAKE_CURRENT_SOURCE_DIR} NAME)
  foreach(src ${tests})
    get_filename_component(name ${src} NAME_WE)
    add_executable(${name} ${src})
    target_link_libraries(${name} PRIVATE ${ARGN} GTest::gtest GTest::gtest_main
                          GTest::gmock)
    add_test(NAME ${folder}.${name} COMMAND ${name})
    set_tests_properties(${folder}.${name} PROPERTIES LABELS ${folder}
                         TIMEOUT 300)
  endforeach()
endfunction()
