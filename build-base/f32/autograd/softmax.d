build-base/f32/autograd/softmax.o: autograd/softmax.cpp autograd/softmax.h \
 autograd/../core/tensor.h autograd/../core/real.h \
 autograd/../core/shape.h autograd/../core/elementwise.h \
 autograd/../core/fastmath.h autograd/../core/parallel.h autograd/arith.h \
 autograd/node.h autograd/../core/allocator.h autograd/grad_mode.h \
 autograd/reduce.h autograd/reduce_minmax.h autograd/reduce_util.h \
 autograd/unary.h
autograd/softmax.h:
autograd/../core/tensor.h:
autograd/../core/real.h:
autograd/../core/shape.h:
autograd/../core/elementwise.h:
autograd/../core/fastmath.h:
autograd/../core/parallel.h:
autograd/arith.h:
autograd/node.h:
autograd/../core/allocator.h:
autograd/grad_mode.h:
autograd/reduce.h:
autograd/reduce_minmax.h:
autograd/reduce_util.h:
autograd/unary.h:
