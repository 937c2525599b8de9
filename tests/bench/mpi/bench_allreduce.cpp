// bench_allreduce.cpp - MPI_Allreduce(SUM, in place) time on float buffers of 1e4 .. 1e7
// elements: `make bench-allreduce` (2 ranks on one machine). Prints the median over
// rounds, the time per parameter, and the "bus bandwidth" 2(W-1)/W * bytes / time that a
// ring allreduce moves per rank, the figure the README's scaling estimate starts from.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, world = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  if (rank == 0) std::printf("%10s %12s %14s %12s\n", "floats", "median ms", "ns/param", "bus GB/s");
  for (long n : {10000L, 100000L, 1000000L, 10000000L}) {
    std::vector<float> buf(n, 1.0f);
    const int rounds = n >= 10000000L ? 7 : 21;
    std::vector<double> t;
    for (int i = 0; i < rounds + 2; ++i) {
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = MPI_Wtime();
      MPI_Allreduce(MPI_IN_PLACE, buf.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      double dt = MPI_Wtime() - t0;
      MPI_Allreduce(MPI_IN_PLACE, &dt, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);  // the slowest rank
      if (i >= 2) t.push_back(dt);  // two warm-up rounds
      std::fill(buf.begin(), buf.end(), 1.0f);
    }
    std::sort(t.begin(), t.end());
    const double med = t[t.size() / 2];
    const double bus = 2.0 * (world - 1) / world * 4.0 * n / med / 1e9;
    if (rank == 0) std::printf("%10ld %12.3f %14.3f %12.2f\n", n, med * 1e3, med * 1e9 / n, bus);
  }
  MPI_Finalize();
  return 0;
}
