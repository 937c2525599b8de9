build-base/f32/core/parallel.o: core/parallel.cpp core/parallel.h core/error.h
core/parallel.h:
core/error.h:
