# Compiles and runs each of PROGRAMS (paths joined by '|') with the docs' compile line, from the working
# directory (the checkout's root):
#   g++ -std=c++17 -O2 -march=native -pthread -I include -I /usr/include/eigen3 main.cpp -o app
# CXX takes g++'s place and EIGEN /usr/include/eigen3's; OUT is a scratch directory.
file(MAKE_DIRECTORY "${OUT}")
string(REPLACE "|" ";" PROGRAMS "${PROGRAMS}")
foreach(program IN LISTS PROGRAMS)
  get_filename_component(name "${program}" NAME_WE)
  execute_process(COMMAND "${CXX}" -std=c++17 -O2 -march=native -pthread -I include -I "${EIGEN}"
                          "${program}" -o "${OUT}/${name}"
                  COMMAND_ERROR_IS_FATAL ANY)
  execute_process(COMMAND "${OUT}/${name}" COMMAND_ERROR_IS_FATAL ANY)
  message(STATUS "${name}: compiled by the docs' line and ran")
endforeach()
list(LENGTH PROGRAMS count)
if(count LESS 2)
  message(FATAL_ERROR "expected README's and getting-started's programs, got: ${PROGRAMS}")
endif()
