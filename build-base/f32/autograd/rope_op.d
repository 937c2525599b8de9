build-base/f32/autograd/rope_op.o: autograd/rope_op.cpp autograd/rope_op.h \
 autograd/../core/tensor.h autograd/../core/real.h \
 autograd/../core/shape.h autograd/../core/error.h \
 autograd/../core/parallel.h autograd/arith.h autograd/node.h \
 autograd/../core/allocator.h autograd/grad_mode.h autograd/shape_ops.h \
 autograd/indexing.h autograd/views.h
autograd/rope_op.h:
autograd/../core/tensor.h:
autograd/../core/real.h:
autograd/../core/shape.h:
autograd/../core/error.h:
autograd/../core/parallel.h:
autograd/arith.h:
autograd/node.h:
autograd/../core/allocator.h:
autograd/grad_mode.h:
autograd/shape_ops.h:
autograd/indexing.h:
autograd/views.h:
