build-base/f32/autograd/loss_ops.o: autograd/loss_ops.cpp autograd/loss_ops.h \
 autograd/../core/tensor.h autograd/../core/real.h \
 autograd/../core/shape.h autograd/../core/elementwise.h \
 autograd/../core/fastmath.h autograd/../core/parallel.h \
 autograd/../core/error.h autograd/arith.h autograd/node.h \
 autograd/../core/allocator.h autograd/grad_mode.h autograd/reduce.h \
 autograd/reduce_minmax.h autograd/shape_ops.h autograd/indexing.h \
 autograd/views.h autograd/softmax.h
autograd/loss_ops.h:
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
autograd/shape_ops.h:
autograd/indexing.h:
autograd/views.h:
autograd/softmax.h:
