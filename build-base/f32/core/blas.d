build-base/f32/core/blas.o: core/blas.cpp core/blas.h core/real.h \
 /usr/include/x86_64-linux-gnu/openblas-openmp/cblas.h \
 /usr/include/x86_64-linux-gnu/openblas-openmp/openblas_config.h \
 core/error.h core/parallel.h
core/blas.h:
core/real.h:
/usr/include/x86_64-linux-gnu/openblas-openmp/cblas.h:
/usr/include/x86_64-linux-gnu/openblas-openmp/openblas_config.h:
core/error.h:
core/parallel.h:
