// test_atomic_write.cpp - every file heed writes goes where the user pointed (core/atomic_file.h):
// through a symlink into its target, never over a FIFO, a device or a directory, and whole
// or not at all. Each writer is tried: write_file_atomically itself, safetensors::save_file,
// save_checkpoint, write_dot and the examples' plot::write_png.
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>
#include <functional>

#include <heed/autograd/engine/to_dot.h>
#include <heed/core/atomic_file.h>
#include <heed/layers/linear.h>
#include <heed/optim/checkpoint_file.h>
#include <heed/optim/safetensors.h>
#include <stb/stb_image.h>

#include "../examples/common/canvas.h"
#include "helpers.h"
#include "tmp_files.h"

using namespace heed;
using heed::test::Bytes;
using heed::test::error_of;
namespace fs = std::filesystem;

namespace {

struct Writer {
  const char* op;                                // the name its errors carry
  std::function<void(const std::string&)> save;  // writes its file at a path
};

std::vector<Writer> writers() {
  static nn::Linear model(2, 1);
  return {{"write_file_atomically", [](const std::string& p) { write_file_atomically("write_file_atomically", p, std::string("new")); }},
          {"safetensors::save_file", [](const std::string& p) { safetensors::save_file({{"a", ones({2})}}, p); }},
          {"save_checkpoint", [](const std::string& p) { save_checkpoint(p, model); }},
          {"write_dot", [](const std::string& p) { write_dot(p, ones({2})); }},
          {"plot::write_png", [](const std::string& p) { plot::Canvas(3, 2).write_png(p); }}};
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

mode_t kind_of(const std::string& path) {  // lstat's file type: the link itself, not its target
  struct stat st;
  REQUIRE(lstat(path.c_str(), &st) == 0);
  return st.st_mode & S_IFMT;
}

}  // namespace

TEST_CASE("atomic write: a symlink is followed, its target gets the bytes and the link stays a link") {
  for (const Writer& w : writers()) {
    CAPTURE(w.op);
    test::TmpDir dir;
    fs::create_directory(dir.dir / "real");
    test::write_bytes(dir.file("real/target"), Bytes{'o', 'l', 'd'}, 3);
    fs::create_symlink("real/target", dir.dir / "link");            // relative, resolved from the link's directory
    fs::create_symlink(dir.dir / "link", dir.dir / "link_to_link");  // a chain
    w.save(dir.file("link_to_link"));
    CHECK(kind_of(dir.file("link")) == S_IFLNK);
    CHECK(kind_of(dir.file("link_to_link")) == S_IFLNK);
    CHECK(kind_of(dir.file("real/target")) == S_IFREG);
    CHECK(test::read_bytes(dir.file("real/target")) != Bytes{'o', 'l', 'd'});
    CHECK(test::read_bytes(dir.file("link")) == test::read_bytes(dir.file("real/target")));
    // The temporary was beside the target, and is gone.
    CHECK(dir.listing() == std::vector<std::string>{"link", "link_to_link", "real"});
    CHECK(std::distance(fs::directory_iterator(dir.dir / "real"), fs::directory_iterator()) == 1);
    // A dangling link: its target is created, the link kept.
    fs::create_symlink("real/new", dir.dir / "dangling");
    w.save(dir.file("dangling"));
    CHECK(kind_of(dir.file("dangling")) == S_IFLNK);
    CHECK(kind_of(dir.file("real/new")) == S_IFREG);
  }
}

TEST_CASE("atomic write: a FIFO, a device or a directory is refused and left as it was") {
  for (const Writer& w : writers()) {
    CAPTURE(w.op);
    test::TmpDir dir;
    std::vector<std::pair<std::string, std::string>> specials;  // path, what the error calls it
    REQUIRE(mkfifo(dir.file("fifo").c_str(), 0600) == 0);
    specials.push_back({dir.file("fifo"), "a FIFO"});
    fs::create_directory(dir.dir / "directory");
    specials.push_back({dir.file("directory"), "a directory"});
    // A node with /dev/null's numbers, where the system lets us make one (root, not in a
    // container without CAP_MKNOD); the refusal happens before anything is written to it.
    if (mknod(dir.file("null").c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0)
      specials.push_back({dir.file("null"), "a character device"});
    fs::create_symlink("fifo", dir.dir / "link_to_fifo");
    const std::vector<std::string> before = dir.listing();
    for (const auto& [path, kind] : specials) {
      const mode_t was = kind_of(path);
      CHECK(error_of([&] { w.save(path); }) ==
            std::string(w.op) + ": '" + path + "': it is " + kind + ", not a regular file: refusing to replace it");
      CHECK(kind_of(path) == was);
    }
    CHECK(error_of([&] { w.save(dir.file("link_to_fifo")); }) ==
          std::string(w.op) + ": '" + dir.file("link_to_fifo") + "': its target '" + dir.file("fifo") +
              "' is a FIFO, not a regular file: refusing to replace it");
    CHECK(kind_of(dir.file("link_to_fifo")) == S_IFLNK);
    CHECK(kind_of(dir.file("fifo")) == S_IFIFO);
    CHECK(dir.listing() == before);  // no temporary left behind
  }
}

TEST_CASE("atomic write: a write that fails leaves the old target whole and no temporary") {
  // A full disk, simulated with a file size limit (which binds root too), through a symlink.
  test::TmpDir dir;
  fs::create_directory(dir.dir / "real");
  const Bytes old = {'o', 'l', 'd'};
  test::write_bytes(dir.file("real/target"), old, old.size());
  fs::create_symlink("real/target", dir.dir / "link");
  rlimit was{};
  REQUIRE(getrlimit(RLIMIT_FSIZE, &was) == 0);
  rlimit small = was;
  small.rlim_cur = 16;
  void (*old_handler)(int) = signal(SIGXFSZ, SIG_IGN);  // EFBIG instead of the signal
  REQUIRE(setrlimit(RLIMIT_FSIZE, &small) == 0);
  const std::string msg = error_of([&] { write_file_atomically("w", dir.file("link"), std::string(1000, 'x')); });
  setrlimit(RLIMIT_FSIZE, &was);
  signal(SIGXFSZ, old_handler);
  CHECK(contains(msg, "w: cannot write '" + dir.file("real/target") + ".tmp."));
  CHECK(contains(msg, "to save '" + dir.file("link") + "'"));
  CHECK(test::read_bytes(dir.file("real/target")) == old);
  CHECK(kind_of(dir.file("link")) == S_IFLNK);
  CHECK(std::distance(fs::directory_iterator(dir.dir / "real"), fs::directory_iterator()) == 1);
}

TEST_CASE("atomic write: plot::write_png writes a PNG that decodes to the pixels drawn") {
  test::TmpDir dir;
  plot::Canvas c(5, 4, plot::kWhite);
  c.fill_rect(1, 1, 2, 2, plot::Rgb{10, 200, 30});
  c.write_png(dir.file("p.png"));
  CHECK(plot::png_size(dir.file("p.png")) == std::pair<int, int>{5, 4});
  const Bytes png = test::read_bytes(dir.file("p.png"));
  int w = 0, h = 0, channels = 0;
  unsigned char* px = stbi_load_from_memory(png.data(), int(png.size()), &w, &h, &channels, 3);
  REQUIRE(px != nullptr);
  CHECK(w == 5);
  CHECK(h == 4);
  auto at = [&](int x, int y, int k) { return int(px[(y * w + x) * 3 + k]); };
  CHECK(at(0, 0, 0) == 255);  // background
  CHECK(at(1, 1, 0) == 10);   // the rectangle
  CHECK(at(2, 2, 1) == 200);
  CHECK(at(3, 3, 2) == 255);
  stbi_image_free(px);
}
