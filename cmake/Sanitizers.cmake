# The sanitizer build (make test builds it in build-asan/) makes memory errors and undefined
# behaviour fail the unit and integration tests instead of passing silently.
if(VOXSERVE_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
