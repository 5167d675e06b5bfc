# Compiles below_cxx17.cpp as C++14 and requires exactly one error, the one that names C++17.
execute_process(COMMAND "${CXX}" -std=c++14 -fsyntax-only "-I${INCLUDE}" "-I${EIGEN}" "${SOURCE}"
                RESULT_VARIABLE result ERROR_VARIABLE output OUTPUT_VARIABLE output_out)
string(REGEX MATCHALL "error:" errors "${output}")
list(LENGTH errors count)
if(result EQUAL 0 OR NOT count EQUAL 1 OR NOT output MATCHES "C\\+\\+17")
  message(FATAL_ERROR "expected one error naming C++17, got ${count} (exit ${result}):\n${output}")
endif()
