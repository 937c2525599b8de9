// safetensors.h - read and write the safetensors format (huggingface/safetensors), the format
// PyTorch users exchange weights in: loading one runs no code, unlike a pickled torch.save.
// With heed's PyTorch parameter names (state_dict, layers/module.h) a model moves both ways:
//
//   heed::safetensors::save_model(*model, "gpt.safetensors");            // heed -> file
//   # Python: model.load_state_dict(safetensors-or-struct+json reader(...), strict=False)
//   heed::safetensors::load_model(*model, "from_torch.safetensors");     // file -> heed
//   auto f = heed::safetensors::load_file("x.safetensors");              // f.tensors, f.metadata
//
// The format, exactly as the reference implementation (safetensors/src/tensor.rs) writes it:
//   8 bytes   N, a little-endian u64: the header's length in bytes
//   N bytes   a UTF-8 JSON object {name: {"dtype": "F32", "shape": [2, 3],
//             "data_offsets": [begin, end]}, ...} with an optional "__metadata__": {string:
//             string}; the writer pads it with spaces to a multiple of 8 bytes
//   the rest  the tensors' bytes, little-endian, row-major (C order); tensor i occupies
//             [begin, end) of this buffer
//
// Saving writes heed's real type: F32 (F64 in the -DHEED_DOUBLE build), the tensors in the
// order given, atomically into the file the path names (a temporary file beside it, fsync,
// rename; a symlink is followed, a FIFO or device refused: core/atomic_file.h). Loading
// converts F32, F64, F16 and BF16 to heed's real; any other dtype (I64, U8, BOOL, ...) is a
// heed::Error naming the tensor and the dtype.
//
// Loading trusts nothing it has not checked, rule by rule as the reference validates; each
// failure is a heed::Error naming the path, the rule and the tensor. Reading and writing take
// time linear in the file's size and number of tensors (200,000 tensors: about a second):
//   header too small       fewer than 8 bytes
//   header too large       N over 100,000,000 (the reference's limit)
//   invalid header length  8 + N past the end of the file
//   invalid header         the header is not UTF-8, or holds a NUL byte (the writer pads with
//                          spaces; the reference's JSON parser refuses a NUL, e.g. as padding)
//   invalid header start   it does not begin with '{'
//   invalid JSON           not JSON, not an object, nested deeper than the format (a "JSON
//                          bomb"), a tensor entry without dtype/shape/data_offsets or with
//                          values of the wrong type, an unknown dtype, __metadata__ not a
//                          map of strings
//   duplicate name         a tensor name twice in the header
//   invalid offset         ordered by offset, tensors must start where the previous ended,
//                          from 0, and end >= begin (no gaps, no overlaps)
//   validation overflow    the product of the shape, or times the dtype's size, overflows 64 bits
//   tensor invalid info    end - begin differs from the shape times the dtype's size
//   incomplete buffer      the last tensor does not end exactly at the end of the file
// A non-regular file (a directory, a FIFO, /dev/zero) is refused before reading, and no size
// from the file is used to allocate before it has been checked against the file's size.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "../layers/module.h"

namespace heed::safetensors {

using Metadata = std::map<std::string, std::string>;  // the header's "__metadata__"

// A file's contents: its tensors in the order of their data (offset order) and its metadata.
struct Contents {
  NamedTensors tensors;
  Metadata metadata;
};

void save_file(const NamedTensors& tensors, const std::string& path, const Metadata& metadata = {});
Contents load_file(const std::string& path);

// module.state_dict() to a file; a tied tensor is written under each of its names, so that
// PyTorch's load_state_dict finds every key it expects.
void save_model(const nn::Module& module, const std::string& path, const Metadata& metadata = {});
// load_file(path), then module.load_state_dict(tensors, strict): the missing and unexpected
// keys (with strict, either non-empty is an error), and nothing changes on error. Only the
// entries the module has are converted: without strict, an entry it lacks is skipped and
// reported whatever its dtype (an I64 position_ids, common in Hugging Face files).
nn::IncompatibleKeys load_model(nn::Module& module, const std::string& path, bool strict = true);
// The same for a module holder (nn::Linear, a HEED_MODULE of your own): its module.
template <class H, class = std::enable_if_t<std::is_base_of_v<nn::ModuleHolderTag, H>>>
void save_model(const H& module, const std::string& path, const Metadata& metadata = {}) {
  save_model(*module, path, metadata);
}
template <class H, class = std::enable_if_t<std::is_base_of_v<nn::ModuleHolderTag, H>>>
nn::IncompatibleKeys load_model(H& module, const std::string& path, bool strict = true) {
  return load_model(*module, path, strict);
}

// The bytes save_file writes, and the parser load_file runs on a file's bytes (`what` names
// the source in errors). For tests and the fuzzer (tests/fuzz/fuzz_safetensors.cpp).
std::vector<uint8_t> serialize(const NamedTensors& tensors, const Metadata& metadata = {});
Contents deserialize(const uint8_t* bytes, size_t size, const std::string& what);

}  // namespace heed::safetensors
