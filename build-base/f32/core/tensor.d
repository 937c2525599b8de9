build-base/f32/core/tensor.o: core/tensor.cpp core/tensor.h core/real.h \
 core/shape.h core/../autograd/grad_mode.h core/allocator.h core/error.h \
 core/parallel.h core/random.h
core/tensor.h:
core/real.h:
core/shape.h:
core/../autograd/grad_mode.h:
core/allocator.h:
core/error.h:
core/parallel.h:
core/random.h:
