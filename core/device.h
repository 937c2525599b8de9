// device.h - libtorch's devices and scalar types, so that a program written for them ports
// by renames. heed runs on the CPU, so every tensor and module is on kCPU and moving one
// there is a no-op; asking for CUDA is a heed::Error (never a silent fallback the program
// did not ask for).
//   heed::Device device(heed::cuda::is_available() ? heed::kCUDA : heed::kCPU);   // kCPU
//   model->to(device);  x = x.to(device);
#pragma once
#include <string>

namespace heed {

// libtorch's scalar types, for TensorOptions. A heed library holds one floating type:
// float in libheed.a, double in libheed_f64.a (`real`); asking for the other, or for an
// integer type (ids are IndexTensor), is a heed::Error, never a silent conversion.
enum class ScalarType { Float, Double, Long, Int, Bool };
constexpr ScalarType kFloat = ScalarType::Float, kFloat32 = ScalarType::Float;
constexpr ScalarType kDouble = ScalarType::Double, kFloat64 = ScalarType::Double;
constexpr ScalarType kLong = ScalarType::Long, kInt64 = ScalarType::Long;
constexpr ScalarType kInt = ScalarType::Int, kInt32 = ScalarType::Int, kBool = ScalarType::Bool;

enum class DeviceType { CPU, CUDA };
constexpr DeviceType kCPU = DeviceType::CPU, kCUDA = DeviceType::CUDA;

class Device {
 public:
  Device(DeviceType type, int index = -1) : type_(type), index_(index) {}  // implicit, as libtorch's
  DeviceType type() const { return type_; }
  int index() const { return index_; }
  bool is_cpu() const { return type_ == kCPU; }
  bool is_cuda() const { return type_ == kCUDA; }
  bool operator==(const Device& o) const { return type_ == o.type_ && index_ == o.index_; }
  bool operator!=(const Device& o) const { return !(*this == o); }
  std::string str() const { return is_cpu() ? "cpu" : "cuda"; }

 private:
  DeviceType type_;
  int index_;
};

namespace detail {
// heed::Error naming `op` unless d is the CPU.
void check_device(const char* op, const Device& d);
}  // namespace detail

namespace cuda {
inline bool is_available() { return false; }
inline int device_count() { return 0; }
}  // namespace cuda

}  // namespace heed
