// test_readme_examples.cpp - the code excerpts of README.md and autograd/README.md (adding
// an op) whose first line names a file (`// autograd/unary.cpp`) appear verbatim in that file,
// so a walkthrough cannot drift from the code it quotes. README.md's own examples are not
// copies: check-readme compiles and runs them from README.md itself (tests/readme/).
#include <fstream>
#include <sstream>

#include "helpers.h"

namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Block {
  std::string first;  // the first line
  std::string rest;   // the lines after it, each ending in a newline
};

// The fenced code blocks of a markdown text.
std::vector<Block> code_blocks(const std::string& md) {
  std::vector<Block> blocks;
  std::istringstream in(md);
  std::string line;
  bool inside = false;
  Block b;
  int n = 0;
  while (std::getline(in, line)) {
    if (line.rfind("```", 0) == 0) {
      if (inside) blocks.push_back(b);
      inside = !inside;
      b = Block();
      n = 0;
    } else if (inside) {
      if (n++ == 0) b.first = line;
      else b.rest += line + "\n";
    }
  }
  return blocks;
}

}  // namespace

TEST_CASE("README: each code excerpt that starts with a file name appears verbatim in that file") {
  int checked = 0;
  for (const char* doc : {"README.md", "autograd/README.md", "layers/README.md", "optim/README.md"}) {
    for (const Block& b : code_blocks(read_text(doc))) {
      std::string path;
      if (b.first.rfind("// ", 0) == 0) path = b.first.substr(3);
      else if (b.first.rfind("# ", 0) == 0) path = b.first.substr(2);
      if (path.empty() || path.find(' ') != std::string::npos || path.find('/') == std::string::npos) continue;
      CAPTURE(doc);
      CAPTURE(path);
      // a file that moved leaves its excerpts naming a path that is gone: an error, not a skip
      REQUIRE_MESSAGE(std::ifstream(path).good(), doc, " quotes ", path, ", which does not exist");
      CHECK_MESSAGE(read_text(path).find(b.rest) != std::string::npos, "not in ", path, ":\n", b.rest);
      ++checked;
    }
  }
  // autograd/README.md's five excerpts of adding an op, layers/README.md's five of adding a
  // layer and a loss, optim/README.md's six of adding an optimizer
  CHECK(checked >= 16);
}
