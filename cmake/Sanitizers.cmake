# The sanitizer build (make test builds it in build-asan/) makes memory errors and undefined
# behaviour fail the unit and integration tests instead of passing silently.
if(VOXSERVE_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()

# ThreadSanitizer for the concurrent parts (scheduler workers, service strands): data races fail
# the tests. A separate build (e.g. build-tsan/) because TSan cannot be combined with ASan.
option(VOXSERVE_SANITIZE_THREAD "Build with ThreadSanitizer" OFF)
if(VOXSERVE_SANITIZE_THREAD)
  if(VOXSERVE_SANITIZE)
    message(FATAL_ERROR "VOXSERVE_SANITIZE_THREAD cannot be combined with VOXSERVE_SANITIZE "
                        "(ThreadSanitizer and AddressSanitizer exclude each other); use two builds")
  endif()
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
endif()

# libFuzzer targets (tests/fuzz): the server's libraries get libFuzzer's coverage instrumentation,
# the targets link libFuzzer. `make` builds them in the ASan tree (VOXSERVE_SANITIZE, clang),
# beside the tests, so the libraries are compiled once for both; alone, VOXSERVE_FUZZ adds ASan +
# UBSan. The coverage is a property of the libraries a fuzz target links (voxserve_module, the
# fuzz targets), not of the tree: the tests, the client and the tools never run under libFuzzer,
# and on Beast's templates the instrumentation doubles a translation unit's compile time
# (docs/build.md). The ignorelist takes out what no fuzzed input reaches inside those libraries.
option(VOXSERVE_FUZZ "Build the libFuzzer targets (needs clang)" OFF)
if(VOXSERVE_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "VOXSERVE_FUZZ needs clang (libFuzzer): configure with "
                        "CC=clang-14 CXX=clang++-14 (make build-asan does)")
  endif()
  if(NOT VOXSERVE_SANITIZE)
    add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer
                        -fno-sanitize-recover=undefined)
    add_link_options(-fsanitize=address,undefined)
  endif()
endif()

# The ignorelist is read through a copy in the build tree named by its content's hash: ccache
# hashes the argument, not the file, so an edited list must change the argument.
if(VOXSERVE_FUZZ)
  set(ignorelist ${PROJECT_SOURCE_DIR}/tests/fuzz/coverage_ignorelist.txt)
  file(SHA256 ${ignorelist} ignorelist_hash)
  string(SUBSTRING ${ignorelist_hash} 0 16 ignorelist_hash)
  set(VOXSERVE_COVERAGE_IGNORELIST ${CMAKE_BINARY_DIR}/coverage_ignorelist-${ignorelist_hash}.txt)
  configure_file(${ignorelist} ${VOXSERVE_COVERAGE_IGNORELIST} COPYONLY)
endif()

# voxserve_fuzz_coverage(target): libFuzzer's coverage for a target's own objects (a no-op unless
# VOXSERVE_FUZZ).
function(voxserve_fuzz_coverage target)
  if(VOXSERVE_FUZZ)
    target_compile_options(${target} PRIVATE -fsanitize=fuzzer-no-link
        -fsanitize-coverage-ignorelist=${VOXSERVE_COVERAGE_IGNORELIST})
  endif()
endfunction()

