build-base/f32/core/shape.o: core/shape.cpp core/shape.h core/error.h
core/shape.h:
core/error.h:
