# Precompiled headers. Beast, gRPC, nlohmann-json, spdlog and GoogleTest headers are most of each
# translation unit's compile time; compiling them once per target keeps `make test` (two builds)
# within CI's budget on two cores. -DVOXSERVE_PCH=OFF builds without them, which also checks that
# every file includes what it uses.
option(VOXSERVE_PCH "Precompile heavy third-party headers" ON)

# Header groups a target picks according to what it uses; each group is a dependency's headers.
set(VOXSERVE_PCH_std <algorithm> <chrono> <cstdint> <functional> <map> <memory> <mutex>
    <optional> <string> <string_view> <unordered_map> <vector>)
set(VOXSERVE_PCH_absl <absl/status/status.h> <absl/status/statusor.h> <absl/strings/str_cat.h>)
set(VOXSERVE_PCH_spdlog <spdlog/spdlog.h>)
set(VOXSERVE_PCH_json <nlohmann/json.hpp>)
set(VOXSERVE_PCH_yaml <yaml-cpp/yaml.h>)
set(VOXSERVE_PCH_asio <boost/asio.hpp>)
set(VOXSERVE_PCH_beast <boost/asio.hpp> <boost/beast/core.hpp> <boost/beast/http.hpp>)
set(VOXSERVE_PCH_ssl <boost/asio/ssl.hpp> <boost/beast/ssl.hpp>)
set(VOXSERVE_PCH_websocket <boost/beast/websocket.hpp>)
set(VOXSERVE_PCH_grpc <grpcpp/grpcpp.h>)
set(VOXSERVE_PCH_ort <onnxruntime_cxx_api.h>)
set(VOXSERVE_PCH_gtest <gtest/gtest.h> <gmock/gmock.h>)

# voxserve_precompile(target group...): the standard library plus the named groups.
function(voxserve_precompile target)
  if(NOT VOXSERVE_PCH)
    return()
  endif()
  set(headers ${VOXSERVE_PCH_std})
  foreach(group ${ARGN})
    if(NOT DEFINED VOXSERVE_PCH_${group})
      message(FATAL_ERROR "unknown precompiled-header group '${group}' for ${target}")
    endif()
    list(APPEND headers ${VOXSERVE_PCH_${group}})
  endforeach()
  list(REMOVE_DUPLICATES headers)
  target_precompile_headers(${target} PRIVATE ${headers})
  if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    # Without its timestamp a clang PCH is the same bytes on every build, which is what lets
    # ccache cache it and the files that include it (ccache manual, "Precompiled headers").
    target_compile_options(${target} PRIVATE "SHELL:-Xclang -fno-pch-timestamp")
  endif()
endfunction()
