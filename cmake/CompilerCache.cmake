# ccache when it is installed (scripts/install-deps.sh installs it): a rebuild of unchanged files,
# in any of the three build trees or in another clone, costs a cache lookup. The cache lives outside
# the clone (ccache's default, ~/.cache/ccache, or CCACHE_DIR), so CI's fresh clone reuses it.
# Paths are made relative to the source tree (base_dir) so clones at other paths share entries;
# the sloppiness settings are what ccache documents for precompiled headers.
option(VOXSERVE_CCACHE "Compile through ccache when it is installed" ON)
if(VOXSERVE_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  find_program(VOXSERVE_CCACHE_PROGRAM ccache)
  if(VOXSERVE_CCACHE_PROGRAM)
    set(launcher ${CMAKE_COMMAND} -E env
        CCACHE_BASEDIR=${PROJECT_SOURCE_DIR}
        CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
        CCACHE_NOHASHDIR=1
        ${VOXSERVE_CCACHE_PROGRAM})
    set(CMAKE_C_COMPILER_LAUNCHER ${launcher})
    set(CMAKE_CXX_COMPILER_LAUNCHER ${launcher})
    message(STATUS "voxserve: compiling through ${VOXSERVE_CCACHE_PROGRAM}")
  endif()
endif()
