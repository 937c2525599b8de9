// checkpoint_file.h - save and load a model and its optimizer to one binary file, so that a
// resumed run continues bitwise as the unbroken run would have.
//
//   heed::save_checkpoint("run/ckpt.bin", *model, opt);   // parameters, buffers, optimizer
//   ...
//   heed::load_checkpoint("run/ckpt.bin", *model, opt);   // in a fresh process
//   schedule.apply(opt, opt.step_count());                // the schedule resumes from it too
//
// What is kept: every parameter and buffer of the model by dotted name (named_parameters,
// named_buffers), and for the optimizer its name ("SGD", "Adam", "AdamW"), its step count
// (which is also the schedule's position: schedules are closed form in the step,
// schedule.h), the current lr of each param group (so a hand-set lr survives) and every
// state tensor by name ("group0.param3.exp_avg", optimizer.h). The model-only overloads
// save no optimizer section, and load a checkpoint's model while ignoring its optimizer.
//
// Loading refuses anything but a regular file (a directory, FIFO or device such as /dev/zero),
// reads and checks the 24-byte header first, then reads exactly the bytes the header declares
// and the file's size confirms (never more), and checks all of it before changing anything:
// a missing, unreadable or truncated file, a wrong magic, an unsupported version, an element size of
// the other build (a float checkpoint into the double build is refused, not converted), a
// checksum mismatch, a tensor name the target lacks or does not have, a shape mismatch, and
// an optimizer of another type or group count. Each is a heed::Error naming the path and
// the problem; the model and optimizer are then untouched. Every length in the file is
// checked against the bytes that remain before anything is allocated for it.
//
// Saving writes the file atomically into the file `path` names (core/atomic_file.h): a
// symlink is followed and stays a link, an existing path that is not a regular file (a
// directory, FIFO or device) is refused and left alone, and a crash or error mid-save leaves
// the previous checkpoint as it was, with no temporary file behind.
//
// Byte layout, version 1. Integers and floats are little-endian; reals are IEEE 754.
//   offset  bytes  field
//   0       8      magic "HEEDCKPT"
//   8       4      u32 format version (1)
//   12      4      u32 bytes per element: 4 (float build) or 8 (double build, -DHEED_DOUBLE)
//   16      8      u64 size of the whole file, checksum included (tells truncation from corruption)
//   24             u64 n, then n tensor records: the model's parameters, then its buffers
//                  u8  1 if an optimizer section follows, else 0; the section is
//                      string   optimizer name
//                      i64      step count
//                      u64 g, then g f64: each param group's current lr
//                      u64 n, then n tensor records: the optimizer's state
//   size-8  8      u64 FNV-1a 64-bit hash of bytes [0, size-8)
// where
//   string         u32 length, then that many bytes (no terminator)
//   tensor record  string name, u32 rank (<= 8), rank x u64 dims, numel x element (row-major)
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "../layers/module.h"
#include "optimizer.h"

namespace heed {

constexpr uint32_t kCheckpointVersion = 1;

void save_checkpoint(const std::string& path, const nn::Module& model);
void save_checkpoint(const std::string& path, const nn::Module& model, const optim::Optimizer& optimizer);

// Refuses a checkpoint saved without an optimizer when given one.
void load_checkpoint(const std::string& path, nn::Module& model);
void load_checkpoint(const std::string& path, nn::Module& model, optim::Optimizer& optimizer);
// The same for a module holder (nn::Linear, a HEED_MODULE of your own): its module.
template <class H, class = std::enable_if_t<std::is_base_of_v<nn::ModuleHolderTag, H>>>
void save_checkpoint(const std::string& path, const H& model) { save_checkpoint(path, *model); }
template <class H, class = std::enable_if_t<std::is_base_of_v<nn::ModuleHolderTag, H>>>
void save_checkpoint(const std::string& path, const H& model, const optim::Optimizer& optimizer) {
  save_checkpoint(path, *model, optimizer);
}
template <class H, class = std::enable_if_t<std::is_base_of_v<nn::ModuleHolderTag, H>>>
void load_checkpoint(const std::string& path, H& model) { load_checkpoint(path, *model); }
template <class H, class = std::enable_if_t<std::is_base_of_v<nn::ModuleHolderTag, H>>>
void load_checkpoint(const std::string& path, H& model, optim::Optimizer& optimizer) {
  load_checkpoint(path, *model, optimizer);
}

// Rewrites the size field and the trailing checksum of a checkpoint image edited in memory
// (at least header + checksum bytes), so that tools, tests and the fuzzer
// (tests/fuzz/fuzz_checkpoint.cpp) can reach the parser's own checks behind a valid seal.
void reseal_checkpoint(std::vector<uint8_t>& bytes);

}  // namespace heed
