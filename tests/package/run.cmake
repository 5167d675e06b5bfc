# The ways a consumer finds rope, each configured, built and run against the package test's
# project (or main.cpp). Called by CTest with BUILD_DIR, SOURCE_DIR (this directory), WORK_DIR,
# GENERATOR, CXX_COMPILER and MODE:
#   install     the build tree installed into a scratch prefix; find_package through
#               CMAKE_PREFIX_PATH
#   build_tree  find_package with rope_DIR set to the build tree (its export())
#   pkg_config  the installed rope.pc: g++ main.cpp $(pkg-config --cflags --libs rope)
#   options     rope configured afresh with BUILD_TESTING=OFF and ROPE_INSTALL_CMAKEDIR set: no
#               tests, and the package files where that option says (found by find_package)
file(REMOVE_RECURSE "${WORK_DIR}")
function(run)
  execute_process(COMMAND ${ARGN} COMMAND_ERROR_IS_FATAL ANY)
endfunction()
function(consumer)
  run("${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${WORK_DIR}/build" -G "${GENERATOR}"
      "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}" ${ARGN})
  run("${CMAKE_COMMAND}" --build "${WORK_DIR}/build")
  run("${WORK_DIR}/build/app")
  run("${WORK_DIR}/build/app_compiled")
  run("${WORK_DIR}/build/reader" "${SOURCE_DIR}/../data/configs/qwen3-8b.json")
endfunction()

if(MODE STREQUAL "install")
  run("${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${WORK_DIR}/prefix")
  consumer("-DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix")
elseif(MODE STREQUAL "build_tree")
  consumer("-Drope_DIR=${BUILD_DIR}")
elseif(MODE STREQUAL "pkg_config")
  run("${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${WORK_DIR}/prefix")
  set(ENV{PKG_CONFIG_PATH} "${WORK_DIR}/prefix/share/pkgconfig")
  execute_process(COMMAND pkg-config --cflags --libs rope OUTPUT_VARIABLE flags
                  OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
  message(STATUS "pkg-config --cflags --libs rope: ${flags}")
  separate_arguments(flags UNIX_COMMAND "${flags}")
  run("${CXX_COMPILER}" -std=c++17 -O2 "${SOURCE_DIR}/main.cpp" ${flags} -o "${WORK_DIR}/app")
  run("${WORK_DIR}/app")
elseif(MODE STREQUAL "options")
  run("${CMAKE_COMMAND}" -S "${SOURCE_DIR}/../.." -B "${WORK_DIR}/rope" -G "${GENERATOR}"
      "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}" -DBUILD_TESTING=OFF -DROPE_BUILD_EXAMPLES=OFF
      -DROPE_BUILD_BENCHMARKS=OFF -DROPE_INSTALL_CMAKEDIR=lib/cmake/rope-elsewhere)
  execute_process(COMMAND "${CMAKE_CTEST_COMMAND}" -N WORKING_DIRECTORY "${WORK_DIR}/rope"
                  OUTPUT_VARIABLE listed COMMAND_ERROR_IS_FATAL ANY)
  if(NOT listed MATCHES "Total Tests: 0")
    message(FATAL_ERROR "BUILD_TESTING=OFF, yet tests were defined:\n${listed}")
  endif()
  run("${CMAKE_COMMAND}" --install "${WORK_DIR}/rope" --prefix "${WORK_DIR}/prefix")
  if(NOT EXISTS "${WORK_DIR}/prefix/lib/cmake/rope-elsewhere/rope-config.cmake")
    message(FATAL_ERROR "rope-config.cmake is not where ROPE_INSTALL_CMAKEDIR says")
  endif()
  consumer("-DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix")
else()
  message(FATAL_ERROR "MODE: install, build_tree, pkg_config or options, not '${MODE}'")
endif()
