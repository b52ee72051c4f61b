# Every dependency comes from Debian (scripts/install-deps.sh installs them).
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
find_package(absl CONFIG REQUIRED)
find_package(Boost 1.74 REQUIRED COMPONENTS system)
if(VOXSERVE_SANITIZE_THREAD AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  # g++ warns (-Wtsan) that TSan does not model the std::atomic_thread_fence in Asio's
  # std_fenced_block; Asio's queues synchronize with mutexes TSan does see. Only Boost's
  # consumers get this, so the other modules' TSan objects stay as they are.
  set_property(TARGET Boost::boost APPEND PROPERTY INTERFACE_COMPILE_OPTIONS -Wno-tsan)
endif()
find_package(spdlog CONFIG REQUIRED)
find_package(yaml-cpp CONFIG REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 CONFIG REQUIRED)
# gRPC transport: Debian's gRPC 1.51 (callback API) and protobuf 3.21; pulls in Protobuf.
find_package(gRPC CONFIG REQUIRED)
find_package(Protobuf REQUIRED)
find_package(OpenSSL 3 REQUIRED)  # TLS (transport/tls) and API key digests (transport/auth)
find_package(CURL 7.85 REQUIRED)  # hub/: `voxserve models pull` (CURLOPT_PROTOCOLS_STR)

pkg_check_modules(ESPEAK_NG REQUIRED IMPORTED_TARGET espeak-ng)
pkg_check_modules(SNDFILE REQUIRED IMPORTED_TARGET sndfile)
pkg_check_modules(SOXR REQUIRED IMPORTED_TARGET soxr)
pkg_check_modules(FFTW3F REQUIRED IMPORTED_TARGET fftw3f)  # audio/features: STFTs
# audio/ogg_vorbis_headers: checks Vorbis headers before libsndfile (which leaks on bad ones)
pkg_check_modules(VORBIS REQUIRED IMPORTED_TARGET vorbis ogg)
pkg_check_modules(ICU REQUIRED IMPORTED_TARGET icu-uc icu-i18n)
pkg_check_modules(AVCODEC REQUIRED IMPORTED_TARGET libavcodec libavutil)
pkg_check_modules(EXPAT REQUIRED IMPORTED_TARGET expat)  # text/ssml: the SSML parser

# libsonic ships neither a pkg-config file nor a CMake package.
find_path(SONIC_INCLUDE_DIR sonic.h REQUIRED)
find_library(SONIC_LIBRARY sonic REQUIRED)
add_library(sonic::sonic UNKNOWN IMPORTED)
set_target_properties(sonic::sonic PROPERTIES IMPORTED_LOCATION ${SONIC_LIBRARY}
                      INTERFACE_INCLUDE_DIRECTORIES ${SONIC_INCLUDE_DIR})

if(VOXSERVE_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(VOXSERVE_BUILD_BENCH)
  find_package(benchmark REQUIRED)
endif()
if(VOXSERVE_ONNX)
  include(${CMAKE_CURRENT_LIST_DIR}/OnnxRuntime.cmake)
endif()
pkg_check_modules(LIBZIP REQUIRED IMPORTED_TARGET libzip)  # Kokoro's NPZ voice files
pkg_check_modules(AVAHI_CORE REQUIRED IMPORTED_TARGET avahi-core)  # Wyoming's zeroconf announcement
pkg_check_modules(LIBPQ REQUIRED IMPORTED_TARGET libpq)  # voices.backend postgres (store/)
