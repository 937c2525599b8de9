build-base/f32/core/denormals.o: core/denormals.cpp core/denormals.h \
 core/parallel.h
core/denormals.h:
core/parallel.h:
