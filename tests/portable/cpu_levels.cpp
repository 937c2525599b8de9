// cpu_levels.cpp - prints the CPU levels (core/cpu.h) this machine supports, lowest first, one
// per line (`make check-portable` runs the float tests once at each); with --in-use, the level
// heed's kernels run at in this process (heed::cpu_capability(), which `make bench` prints).
#include <heed/heed.h>

#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--in-use") == 0) {
    std::printf("%s\n", heed::cpu_capability());
    return 0;
  }
  for (heed::CpuLevel level : heed::cpu_supported_levels())
    std::printf("%s\n", heed::cpu_level_name(level));
}
