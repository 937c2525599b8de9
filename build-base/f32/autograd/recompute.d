build-base/f32/autograd/recompute.o: autograd/recompute.cpp \
 autograd/recompute.h autograd/../core/tensor.h autograd/../core/real.h \
 autograd/../core/shape.h autograd/../core/error.h \
 autograd/../core/random.h autograd/grad_mode.h autograd/node.h \
 autograd/../core/allocator.h
autograd/recompute.h:
autograd/../core/tensor.h:
autograd/../core/real.h:
autograd/../core/shape.h:
autograd/../core/error.h:
autograd/../core/random.h:
autograd/grad_mode.h:
autograd/node.h:
autograd/../core/allocator.h:
