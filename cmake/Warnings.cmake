# Warnings are errors for our own code (STYLE.md); third-party headers come in as SYSTEM includes.
# -Wno-restrict, -Wno-stringop-overflow, -Wno-array-bounds: g++ 12 reports false positives inside
# libstdc++'s std::string operator+ and replace once they are inlined (GCC bugs 105329, 105651),
# which optimised builds do in many of our files.
# The fuzz tree (clang) reports warnings without failing: g++ builds are the ones that gate.
function(voxserve_set_warnings target)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Werror
                           -Wno-missing-field-initializers -Wno-restrict -Wno-stringop-overflow
                           -Wno-array-bounds)
  else()
    target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-missing-field-initializers)
  endif()
endfunction()
