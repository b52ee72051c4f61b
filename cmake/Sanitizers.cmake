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
