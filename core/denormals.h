// denormals.h - flush denormal numbers to zero (FTZ and DAZ), off by default as in PyTorch
// (torch.set_flush_denormal).
//
// A float below 2^-126 (a double below 2^-1022) is denormal: it keeps fewer significant
// bits down to 2^-149. Some CPUs (many Intel cores) take a microcode assist costing ~100
// cycles for each SSE/AVX operation that reads or produces one; attention meets them when
// softmax's exp(s - max) lands in [2^-149, 2^-126), i.e. scores 87 to 104 below the row's
// maximum, and then multiplies those weights by the values.
//
// Measured by tests/bench/bench_denormals.cpp (on an AMD EPYC; it runs in
// `make bench`; numbers in the README, "Reliability"), attention forward + backward with
// 13% of its probabilities denormal and values of 1e-36 runs not much slower than the same
// attention on normal inputs, so heed keeps IEEE denormals by default: results then match
// PyTorch's (which keeps them too) and code outside heed sees no change of floating-point mode.
// On a CPU where the assist costs, turn flushing on:
//
//   heed::set_flush_denormals(true);   // returns false where unsupported (no SSE)
//
// It sets MXCSR's FTZ (results below the smallest normal become +-0) and DAZ (denormal
// inputs are read as +-0) on the calling thread and on every thread of OpenMP's pool up to
// get_num_threads(); threads started later copy their creator's mode (Linux threads inherit
// MXCSR), which covers OpenMP's and OpenBLAS's workers started by a larger team. Both float
// and double follow it. It is per thread: std::threads you started before the call keep
// their mode. tests/test_denormals.cpp checks that a denormal product is 0 on every thread
// of a parallel kernel with flushing on and kept with it off, and that attention's results
// do not change beyond denormal amounts.
#pragma once

namespace heed {

// Turn flush-to-zero + denormals-are-zero on or off (see above). Returns false, changing
// nothing, on a target without SSE's MXCSR.
bool set_flush_denormals(bool on);
// Whether the calling thread flushes denormals (FTZ and DAZ both set).
bool get_flush_denormals();

}  // namespace heed
