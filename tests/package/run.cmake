# Installs the build tree's rope into a scratch prefix, then configures, builds and runs the
# consumer project against it. Called by CTest with BUILD_DIR, SOURCE_DIR, WORK_DIR, GENERATOR
# and CXX_COMPILER.
file(REMOVE_RECURSE "${WORK_DIR}")
execute_process(COMMAND "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${WORK_DIR}/prefix"
                COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND "${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${WORK_DIR}/build"
                        -G "${GENERATOR}" "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}"
                        "-DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix"
                COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND "${CMAKE_COMMAND}" --build "${WORK_DIR}/build" COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND "${WORK_DIR}/build/app" COMMAND_ERROR_IS_FATAL ANY)
