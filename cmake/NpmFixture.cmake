# JavaScript test dependencies: `npm ci` of a checked-in package.json + package-lock.json into the
# build folder, as a CTest fixture, so the source tree stays clean and every run uses exactly the
# pinned versions. One function for the browser, ElevenLabs SDK, LiveKit and deploy tests.
find_program(VOXSERVE_NODE node)
find_program(VOXSERVE_NPM npm)

# voxserve_npm_fixture(NAME test PACKAGE_DIR src INSTALL_DIR dir FIXTURE name LABELS label...):
# copies PACKAGE_DIR's package files to INSTALL_DIR and adds CTest entry NAME, which installs them
# there and sets up FIXTURE for the tests that require it (their node_modules: INSTALL_DIR).
function(voxserve_npm_fixture)
  cmake_parse_arguments(ARG "" "NAME;PACKAGE_DIR;INSTALL_DIR;FIXTURE" "LABELS" ${ARGN})
  foreach(file package.json package-lock.json)
    configure_file(${ARG_PACKAGE_DIR}/${file} ${ARG_INSTALL_DIR}/${file} COPYONLY)
  endforeach()
  add_test(NAME ${ARG_NAME}
           COMMAND ${VOXSERVE_NPM} ci --no-audit --no-fund --loglevel=error
           WORKING_DIRECTORY ${ARG_INSTALL_DIR})
  set_tests_properties(${ARG_NAME} PROPERTIES FIXTURES_SETUP ${ARG_FIXTURE}
                                              LABELS "${ARG_LABELS}" TIMEOUT 300)
endfunction()
