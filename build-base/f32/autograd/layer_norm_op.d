build-base/f32/autograd/layer_norm_op.o: autograd/layer_norm_op.cpp \
 autograd/layer_norm_op.h autograd/../core/tensor.h \
 autograd/../core/real.h autograd/../core/shape.h \
 autograd/../core/elementwise.h autograd/../core/fastmath.h \
 autograd/../core/parallel.h autograd/../core/error.h autograd/arith.h \
 autograd/node.h autograd/../core/allocator.h autograd/grad_mode.h \
 autograd/reduce.h autograd/reduce_minmax.h autograd/unary.h
autograd/layer_norm_op.h:
autograd/../core/tensor.h:
autograd/../core/real.h:
autograd/../core/shape.h:
autograd/../core/elementwise.h:
autograd/../core/fastmath.h:
autograd/../core/parallel.h:
autograd/../core/error.h:
autograd/arith.h:
autograd/node.h:
autograd/../core/allocator.h:
autograd/grad_mode.h:
autograd/reduce.h:
autograd/reduce_minmax.h:
autograd/unary.h:
