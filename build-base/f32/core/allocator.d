build-base/f32/core/allocator.o: core/allocator.cpp core/allocator.h \
 core/error.h
core/allocator.h:
core/error.h:
