build-base/f32/core/random.o: core/random.cpp core/random.h
core/random.h:
