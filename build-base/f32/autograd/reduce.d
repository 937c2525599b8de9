build-base/f32/autograd/reduce.o: autograd/reduce.cpp autograd/reduce.h \
 autograd/../core/tensor.h autograd/../core/real.h \
 autograd/../core/shape.h autograd/reduce_minmax.h \
 autograd/../core/elementwise.h autograd/../core/fastmath.h \
 autograd/../core/parallel.h autograd/../core/error.h autograd/arith.h \
 autograd/node.h autograd/../core/allocator.h autograd/grad_mode.h \
 autograd/reduce_util.h
autograd/reduce.h:
autograd/../core/tensor.h:
autograd/../core/real.h:
autograd/../core/shape.h:
autograd/reduce_minmax.h:
autograd/../core/elementwise.h:
autograd/../core/fastmath.h:
autograd/../core/parallel.h:
autograd/../core/error.h:
autograd/arith.h:
autograd/node.h:
autograd/../core/allocator.h:
autograd/grad_mode.h:
autograd/reduce_util.h:
