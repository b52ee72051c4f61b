# ccache when it is installed (scripts/install-deps.sh installs it): a rebuild of unchanged files,
# in any of the three build trees or in another clone, costs a cache lookup. The cache lives outside
# the clone (ccache's default, ~/.cache/ccache, or CCACHE_DIR), so CI's fresh clone reuses it.
# Paths are made relative to the source tree (base_dir; cmake/ccache-launcher.sh also those that
# base_dir misses) so clones at other paths share entries; the sloppiness settings are what
# ccache documents for precompiled headers.
option(VOXSERVE_CCACHE "Compile through ccache when it is installed" ON)
if(VOXSERVE_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  find_program(VOXSERVE_CCACHE_PROGRAM ccache)
  if(VOXSERVE_CCACHE_PROGRAM)
    set(launcher ${PROJECT_SOURCE_DIR}/cmake/ccache-launcher.sh ${VOXSERVE_CCACHE_PROGRAM}
        ${PROJECT_SOURCE_DIR})
    set(CMAKE_C_COMPILER_LAUNCHER ${launcher})
    set(CMAKE_CXX_COMPILER_LAUNCHER ${launcher})
    message(STATUS "voxserve: compiling through ${VOXSERVE_CCACHE_PROGRAM}")
  endif()
endif()
