build-base/f32/autograd/reduce_minmax.o: autograd/reduce_minmax.cpp \
 autograd/reduce_minmax.h autograd/../core/tensor.h \
 autograd/../core/real.h autograd/../core/shape.h \
 autograd/../core/elementwise.h autograd/../core/fastmath.h \
 autograd/../core/parallel.h autograd/../core/error.h autograd/node.h \
 autograd/../core/allocator.h autograd/grad_mode.h autograd/reduce.h \
 autograd/reduce_util.h
autograd/reduce_minmax.h:
autograd/../core/tensor.h:
autograd/../core/real.h:
autograd/../core/shape.h:
autograd/../core/elementwise.h:
autograd/../core/fastmath.h:
autograd/../core/parallel.h:
autograd/../core/error.h:
autograd/node.h:
autograd/../core/allocator.h:
autograd/grad_mode.h:
autograd/reduce.h:
autograd/reduce_util.h:
