// error.h - heed::Error, the one exception heed throws for bad input.
//
// Every message names the op and the offending shapes or values, e.g.
//   matmul: shapes (2,3) and (4,5) do not align
// HEED_CHECK(cond, op, message-stream) keeps call sites to one line; it is a plain
// function-like macro (no hidden control flow beyond the throw it names).
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>

namespace heed {

struct Error : std::runtime_error {
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

// Builds "op: message" from any streamable pieces and throws it.
template <class... Parts>
[[noreturn]] void fail(const char* op, const Parts&... parts) {
  std::ostringstream os;
  os << op << ": ";
  (os << ... << parts);
  throw Error(os.str());
}

}  // namespace heed

#define HEED_CHECK(cond, op, ...) \
  do {                            \
    if (!(cond)) ::heed::fail(op, __VA_ARGS__); \
  } while (0)
