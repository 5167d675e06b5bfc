// Every code block of README.md and docs/*.md is code that is compiled, run or declared:
//
//   ```cpp    a block that defines main() is a whole program: tests/doc_programs.cmake wrote it,
//             as it stands, to <programs dir>/<page>_<line>.cpp, which the tests compile and run
//             (the file must be there, byte for byte). In README.md and docs/getting-started.md
//             every block is one. Elsewhere the block, line for line (indentation aside), is part
//             of a file in examples/ or tests/ (compiled and run by the tests); or, for
//             signatures, each declaration in it (split at ';', comments dropped, whitespace
//             collapsed) is in a public header.
//   ```cmake  each line (comments dropped) is a line of a consumer project the tests build:
//             tests/package/CMakeLists.txt (find_package) or tests/subdirectory/CMakeLists.txt
//             (add_subdirectory).
//   ```sh     commands: README's are the ones CI runs. Elsewhere each command is one of README's,
//             or runs cmake, ctest, python3, g++ (the compile lines, built by docs_compile_line)
//             or a program built from bench/ or examples/ (by path under build/), or a script
//             of bench/ (bench/ab/compare.sh), or is an export; every repository file it names
//             exists.
//   ```text   diagrams and output, not code.
// Any other fence fails. Usage: docs_code_blocks <source dir> <programs dir>; prints every
// offending block.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

std::string read(const fs::path& path) {
  std::ifstream file(path);
  std::stringstream s;
  s << file.rdbuf();
  return s.str();
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream s(text);
  for (std::string line; std::getline(s, line);) out.push_back(line);
  return out;
}

std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t\r") - first + 1);
}

std::string drop_comment(const std::string& line, const std::string& marker) {
  const auto at = line.find(marker);
  return at == std::string::npos ? line : line.substr(0, at);
}

// Lines trimmed, empty ones dropped, joined by '\n'.
std::string normalized(const std::string& text) {
  std::string out;
  for (const auto& line : lines(text)) {
    const std::string t = trim(line);
    if (!t.empty()) out += t + "\n";
  }
  return out;
}

// Comments dropped, every run of whitespace one space.
std::string collapsed(const std::string& text) {
  std::string out;
  for (const auto& line : lines(text)) {
    for (const char c : drop_comment(line, "//") + " ") {
      const bool space = c == ' ' || c == '\t' || c == '\r';
      if (space && (out.empty() || out.back() == ' ')) continue;
      out += space ? ' ' : c;
    }
  }
  return out;
}

std::string concatenated(const fs::path& dir, const std::string& extension, bool recursive,
                         std::string (*transform)(const std::string&)) {
  std::string out;
  const auto add = [&](const fs::directory_entry& entry) {
    if (entry.is_regular_file() && entry.path().extension() == extension) {
      out += transform(read(entry.path())) + "\n";
    }
  };
  if (recursive) {
    for (const auto& entry : fs::recursive_directory_iterator(dir)) add(entry);
  } else {
    for (const auto& entry : fs::directory_iterator(dir)) add(entry);
  }
  return out;
}

struct Block {
  std::string file, language, text;
  std::size_t line;
};

std::vector<Block> blocks(const fs::path& path, const std::string& name) {
  std::vector<Block> out;
  const auto all = lines(read(path));
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (trim(all[i]).rfind("```", 0) != 0) continue;
    Block block{name, trim(trim(all[i]).substr(3)), "", i + 1};
    for (++i; i < all.size() && trim(all[i]) != "```"; ++i) block.text += all[i] + "\n";
    out.push_back(block);
  }
  return out;
}

// Commands of an sh block outside README.md (a line ending in '\\' continues the command).
std::string check_commands(const fs::path& root, const std::string& text,
                           const std::vector<std::string>& readme_commands) {
  std::string problem, command;
  for (const auto& line : lines(text)) {
    command += trim(drop_comment(line, "#"));
    if (!command.empty() && command.back() == '\\') {
      command.back() = ' ';
      continue;
    }
    std::stringstream words(command);
    std::vector<std::string> word;
    for (std::string w; words >> w;) word.push_back(w);
    bool known = word.empty();
    for (const auto& c : readme_commands) known = known || c == trim(command);
    for (const char* tool : {"cmake", "ctest", "python3", "g++", "export"}) {
      known = known || word[0] == tool;
    }
    // A measuring script of bench/ (bench/ab/compare.sh), run from the source tree.
    const std::string& first = word.empty() ? command : word[0];
    if (!known && first.rfind("bench/", 0) == 0 && first.size() > 3 &&
        first.compare(first.size() - 3, 3, ".sh") == 0) {
      known = fs::exists(root / first);
    }
    if (!known && word[0].rfind("build/", 0) == 0) {
      const std::string program = fs::path(word[0]).filename().string();
      known = fs::exists(root / "bench" / (program + ".cpp")) ||
              fs::exists(root / "examples" / (program + ".cpp"));
    }
    if (!known) {
      problem +=
          "  not a README command, cmake, ctest, python3, g++, export, a built program or "
          "a bench/ script: " +
          command + "\n";
    }
    for (const auto& w : word) {
      for (const char* dir : {"bench/", "docs/", "examples/", "include/", "tests/"}) {
        if (w.rfind(dir, 0) == 0 && !fs::exists(root / w)) {
          problem += "  names a file that does not exist: " + w + "\n";
        }
      }
    }
    command.clear();
  }
  return problem;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: docs_code_blocks <source dir> <programs dir>\n");
    return 2;
  }
  const fs::path root = argv[1], programs = argv[2];
  const std::string sources = concatenated(root / "examples", ".cpp", false, normalized) +
                              concatenated(root / "tests", ".cpp", true, normalized);
  const std::string headers =
      collapsed(concatenated(root / "include" / "rope", ".hpp", false, collapsed));
  std::vector<std::string> cmake_lines;
  for (const char* consumer :
       {"tests/package/CMakeLists.txt", "tests/subdirectory/CMakeLists.txt"}) {
    for (const auto& line : lines(read(root / consumer))) {
      cmake_lines.push_back(trim(drop_comment(line, "#")));
    }
  }
  std::vector<Block> all = blocks(root / "README.md", "README.md");
  std::vector<std::string> readme_commands;
  for (const auto& block : all) {
    if (block.language != "sh") continue;
    for (const auto& line : lines(block.text)) readme_commands.push_back(trim(line));
  }
  for (const auto& entry : fs::directory_iterator(root / "docs")) {
    if (entry.path().extension() != ".md") continue;
    for (auto& block : blocks(entry.path(), "docs/" + entry.path().filename().string())) {
      all.push_back(block);
    }
  }

  int failures = 0, checked = 0, whole = 0;
  for (const auto& block : all) {
    std::string problem;
    const bool program_page = block.file == "README.md" || block.file == "docs/getting-started.md";
    if (block.language == "cpp" && block.text.find("int main(") != std::string::npos) {
      const fs::path file = programs / (fs::path(block.file).stem().string() + "_" +
                                        std::to_string(block.line) + ".cpp");
      if (!fs::exists(file) || read(file) != block.text) {
        problem = "  a whole program, but not the one the tests compiled: " + file.string() + "\n";
      }
      ++whole;
    } else if (block.language == "cpp" && program_page) {
      problem = "  not a whole program (every C++ block of this page must define main)\n";
    } else if (block.language == "cpp") {
      if (sources.find(normalized(block.text)) == std::string::npos) {
        std::stringstream declarations(collapsed(block.text));
        for (std::string d; std::getline(declarations, d, ';');) {
          if (!trim(d).empty() && headers.find(trim(d)) == std::string::npos) {
            problem +=
                "  not in examples/ or tests/, and not declared in include/rope: " + trim(d) + "\n";
          }
        }
      }
    } else if (block.language == "cmake") {
      for (const auto& line : lines(block.text)) {
        const std::string t = trim(drop_comment(line, "#"));
        bool found = t.empty();
        for (const auto& c : cmake_lines) found = found || c == t;
        if (!found) problem += "  not a line of a consumer project the tests build: " + t + "\n";
      }
    } else if (block.language == "sh") {
      if (block.file != "README.md") problem = check_commands(root, block.text, readme_commands);
    } else if (block.language != "text") {
      problem = "  a fence of language '" + block.language + "' (use cpp, cmake, sh or text)\n";
    }
    ++checked;
    if (!problem.empty()) {
      ++failures;
      std::printf("%s:%zu: ```%s block\n%s", block.file.c_str(), block.line, block.language.c_str(),
                  problem.c_str());
    }
  }
  std::printf("%d code blocks checked (%d whole programs), %d failed\n", checked, whole, failures);
  return failures == 0 && checked > 0 ? 0 : 1;
}
