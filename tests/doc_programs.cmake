# Every ```cpp block of README.md and docs/*.md that defines main() is a whole program, as a reader
# copies it: written to the build tree as one file (doc_programs/<page>_<line of the fence>.cpp),
# compiled with the project's warnings, and run as the test docs.program.<page>:<line>. A program
# that includes no rope header (the pasted kernel) is compiled without the library's include path.
# docs_code_blocks checks that each such block has its file here. Included by tests/CMakeLists.txt.
set(doc_pages "${PROJECT_SOURCE_DIR}/README.md")
file(GLOB doc_docs "${PROJECT_SOURCE_DIR}/docs/*.md")
list(APPEND doc_pages ${doc_docs})
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${doc_pages})
set(doc_program_dir "${CMAKE_CURRENT_BINARY_DIR}/doc_programs")
file(MAKE_DIRECTORY "${doc_program_dir}")

set(doc_rope_programs "")  # the programs that include rope, for docs.compile_line
set(fence_open "```cpp\n")
string(LENGTH "${fence_open}" fence_open_length)
foreach(page IN LISTS doc_pages)
  file(READ "${page}" rest)
  get_filename_component(stem "${page}" NAME_WE)
  file(RELATIVE_PATH relative "${PROJECT_SOURCE_DIR}" "${page}")
  set(lines_before 0)
  while(TRUE)
    string(FIND "${rest}" "${fence_open}" open)
    if(open EQUAL -1)
      break()
    endif()
    # The fence's line: one more than the newlines before it.
    string(SUBSTRING "${rest}" 0 ${open} before)
    string(REGEX MATCHALL "\n" newlines "${before}")
    list(LENGTH newlines count)
    math(EXPR fence_line "${lines_before} + ${count} + 1")
    math(EXPR body "${open} + ${fence_open_length}")
    string(SUBSTRING "${rest}" ${body} -1 rest)
    string(FIND "${rest}" "\n```" close)
    math(EXPR close "${close} + 1")
    string(SUBSTRING "${rest}" 0 ${close} block)
    string(SUBSTRING "${rest}" ${close} -1 rest)
    string(REGEX MATCHALL "\n" newlines "${block}")
    list(LENGTH newlines count)
    math(EXPR lines_before "${fence_line} + ${count}")
    if(NOT block MATCHES "int main\\(")
      continue()
    endif()
    set(target "doc_${stem}_${fence_line}")
    set(source "${doc_program_dir}/${stem}_${fence_line}.cpp")
    file(WRITE "${source}.new" "${block}")
    file(COPY_FILE "${source}.new" "${source}" ONLY_IF_DIFFERENT)
    add_executable(${target} "${source}")
    if(block MATCHES "#include <rope/")
      rope_own_target(${target})
      list(APPEND doc_rope_programs "${source}")
      if(block MATCHES "#include <rope/hf_config.hpp>")
        target_link_libraries(${target} PRIVATE nlohmann_json::nlohmann_json)
      endif()
    else()
      separate_arguments(flags UNIX_COMMAND "${ROPE_WARNING_FLAGS}")
      target_compile_options(${target} PRIVATE ${flags})
    endif()
    add_test(NAME "docs.program.${relative}:${fence_line}" COMMAND ${target}
             WORKING_DIRECTORY "${doc_program_dir}")
  endwhile()
endforeach()

# The compile line of README.md and docs/getting-started.md, as they print it, run from the
# checkout's root on each program that includes rope (with this build's compiler, and the Eigen
# directory it found, /usr/include/eigen3 on Debian).
get_target_property(doc_eigen_include Eigen3::Eigen INTERFACE_INCLUDE_DIRECTORIES)
list(JOIN doc_rope_programs "|" doc_rope_programs)
add_test(NAME docs.compile_line
         COMMAND "${CMAKE_COMMAND}" "-DCXX=${CMAKE_CXX_COMPILER}" "-DEIGEN=${doc_eigen_include}"
                 "-DPROGRAMS=${doc_rope_programs}" "-DOUT=${doc_program_dir}/compile_line"
                 -P "${CMAKE_CURRENT_SOURCE_DIR}/docs_compile_line.cmake"
         WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}")
