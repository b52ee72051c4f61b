# ONNX Runtime (the pinned C/C++ SDK): imported target onnxruntime::onnxruntime.
#
# Looked up in ONNXRUNTIME_ROOT (CMake variable or environment variable), else in
# third_party/onnxruntime (scripts/fetch-onnxruntime.sh puts the NuGet package there; `make`
# runs it). Accepts the release-archive layout (include/, lib/) and an unpacked NuGet package
# (build/native/include/, runtimes/linux-x64/native/). Binaries find the library at run time
# through their RPATH.
option(VOXSERVE_ONNXRUNTIME_GPU "Use the CUDA build of ONNX Runtime (third_party/onnxruntime/gpu)" OFF)

if(NOT ONNXRUNTIME_ROOT AND DEFINED ENV{ONNXRUNTIME_ROOT})
  set(ONNXRUNTIME_ROOT "$ENV{ONNXRUNTIME_ROOT}")
endif()
if(NOT ONNXRUNTIME_ROOT)
  if(VOXSERVE_ONNXRUNTIME_GPU)
    set(ONNXRUNTIME_ROOT "${PROJECT_SOURCE_DIR}/third_party/onnxruntime/gpu")
  else()
    set(ONNXRUNTIME_ROOT "${PROJECT_SOURCE_DIR}/third_party/onnxruntime")
  endif()
endif()
set(ONNXRUNTIME_ROOT "${ONNXRUNTIME_ROOT}" CACHE PATH "ONNX Runtime SDK folder (include/ + lib/)")

find_path(ONNXRUNTIME_INCLUDE_DIR onnxruntime_cxx_api.h
          PATHS ${ONNXRUNTIME_ROOT}/include ${ONNXRUNTIME_ROOT}/include/onnxruntime
                ${ONNXRUNTIME_ROOT}/build/native/include
          NO_DEFAULT_PATH)
find_library(ONNXRUNTIME_LIBRARY onnxruntime
             PATHS ${ONNXRUNTIME_ROOT}/lib ${ONNXRUNTIME_ROOT}/runtimes/linux-x64/native
             NO_DEFAULT_PATH)
if(NOT ONNXRUNTIME_INCLUDE_DIR OR NOT ONNXRUNTIME_LIBRARY)
  message(FATAL_ERROR
    "ONNX Runtime not found in ${ONNXRUNTIME_ROOT}.\n"
    "Run scripts/fetch-onnxruntime.sh (make does it for you; needs dotnet), or unpack the official "
    "release archive onnxruntime-linux-x64-1.31.1.tgz and configure with "
    "-DONNXRUNTIME_ROOT=/path/to/onnxruntime-linux-x64-1.31.1 (or export ONNXRUNTIME_ROOT).")
endif()

# The library's soname is libonnxruntime.so.1. The release archive ships that name as a link;
# a NuGet package has only libonnxruntime.so, so give the loader the name it will look for.
get_filename_component(_ort_real "${ONNXRUNTIME_LIBRARY}" REALPATH)
get_filename_component(_ort_dir "${ONNXRUNTIME_LIBRARY}" DIRECTORY)
if(NOT EXISTS "${_ort_dir}/libonnxruntime.so.1")
  set(_ort_dir "${CMAKE_BINARY_DIR}/onnxruntime-lib")
  file(MAKE_DIRECTORY "${_ort_dir}")
  file(CREATE_LINK "${_ort_real}" "${_ort_dir}/libonnxruntime.so.1" SYMBOLIC)
endif()

add_library(onnxruntime::onnxruntime SHARED IMPORTED)
set_target_properties(onnxruntime::onnxruntime PROPERTIES
  IMPORTED_LOCATION "${_ort_dir}/libonnxruntime.so.1"
  IMPORTED_SONAME "libonnxruntime.so.1"
  # Imported include directories are SYSTEM: ORT's headers do not meet our -Werror warnings.
  INTERFACE_INCLUDE_DIRECTORIES "${ONNXRUNTIME_INCLUDE_DIR}")
# Installed binaries look beside ORT's own folder too (build-tree binaries get it automatically).
list(APPEND CMAKE_INSTALL_RPATH "${_ort_dir}")
message(STATUS "ONNX Runtime: ${_ort_real}")
