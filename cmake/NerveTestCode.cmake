# SPDX-License-Identifier: LGPL-2.1-or-later
# How test programs are compiled: nerve_test_code(TARGET...).
#
# The tests' own code is compiled for compile speed, not run speed: what they test, lib/ and the
# programs, is built as shipped (RelWithDebInfo here, the sanitizers' flags in build-asan/), and only
# the test code itself changes.
# - -O0 -g1: a test file with GMock's matchers and actions took 30 s at -O2 -g, 17 s at -O0 -g and
#   12 s at -O0 -g0 (tests/unit/contain_test.cpp, this kind of machine); line tables (-g1) still give
#   a failure's stack its files and lines. Added after the build type's flags, so they win.
# - a unity build unless NERVE_UNITY=OFF (CMakeLists.txt): the files of one test program include
#   the same heavy headers (gtest, gmock, sdbus-c++, nlohmann/json) and instantiate the same mocks;
#   six unit test files at -O0 -g1 took 81 s one by one and 24 s as one compile.
function(nerve_test_code)
  foreach(target IN LISTS ARGN)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-O0 -g1>)
    if(NERVE_UNITY)
      set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE ${NERVE_UNITY_BATCH})
      # gcc takes a test file included by the batch for a header, and a fixture in its anonymous
      # namespace for one that every file including the header would see differently: in a batch
      # there is no such second file.
      target_compile_options(${target} PRIVATE $<$<CXX_COMPILER_ID:GNU>:-Wno-subobject-linkage>)
    endif()
  endforeach()
endfunction()
