# Lays out a project that vendors rope (its CMakeLists.txt, the package test's main.cpp, and
# the source tree linked in as ./rope), then configures, builds and runs it. Called by CTest with
# ROPE_DIR, SOURCE_DIR, WORK_DIR, GENERATOR and CXX_COMPILER.
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}/app")
file(COPY "${SOURCE_DIR}/CMakeLists.txt" "${SOURCE_DIR}/../package/main.cpp"
     DESTINATION "${WORK_DIR}/app")
file(CREATE_LINK "${ROPE_DIR}" "${WORK_DIR}/app/rope" SYMBOLIC)
execute_process(COMMAND "${CMAKE_COMMAND}" -S "${WORK_DIR}/app" -B "${WORK_DIR}/build"
                        -G "${GENERATOR}" "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}"
                COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND "${CMAKE_COMMAND}" --build "${WORK_DIR}/build" COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND "${WORK_DIR}/build/app" COMMAND_ERROR_IS_FATAL ANY)
