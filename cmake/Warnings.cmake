# Warnings are errors for our own code (STYLE.md); third-party headers come in as SYSTEM includes.
# -Wno-restrict: g++ 12 reports false -Wrestrict positives inside libstdc++'s string operator+ at
# -O3 (GCC bug 105329).
function(voxserve_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Werror
                         -Wno-missing-field-initializers -Wno-restrict)
endfunction()
