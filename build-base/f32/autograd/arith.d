build-base/f32/autograd/arith.o: autograd/arith.cpp autograd/arith.h \
 autograd/../core/tensor.h autograd/../core/real.h \
 autograd/../core/shape.h autograd/../core/elementwise.h \
 autograd/../core/fastmath.h autograd/../core/parallel.h autograd/node.h \
 autograd/../core/allocator.h autograd/grad_mode.h autograd/reduce.h \
 autograd/reduce_minmax.h
autograd/arith.h:
autograd/../core/tensor.h:
autograd/../core/real.h:
autograd/../core/shape.h:
autograd/../core/elementwise.h:
autograd/../core/fastmath.h:
autograd/../core/parallel.h:
autograd/node.h:
autograd/../core/allocator.h:
autograd/grad_mode.h:
autograd/reduce.h:
autograd/reduce_minmax.h:
