# Warnings are errors for our own code (STYLE.md); third-party headers come in as SYSTEM includes.
# Both compilers gate: g++ in the release tree (-O2, where its flow warnings show), clang in the
# sanitizer trees, which are the ones that compile the tests.
# -Wno-restrict, -Wno-stringop-overflow, -Wno-array-bounds: g++ 12 reports false positives inside
# libstdc++'s std::string operator+ and replace once they are inlined (GCC bugs 105329, 105651),
# which optimised builds do in many of our files.
function(voxserve_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Werror
                         -Wno-missing-field-initializers)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(${target} PRIVATE -Wno-restrict -Wno-stringop-overflow
                           -Wno-array-bounds)
  endif()
endfunction()
