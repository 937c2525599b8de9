build-base/f32/autograd/linear_op.o: autograd/linear_op.cpp \
 autograd/linear_op.h autograd/../core/tensor.h autograd/../core/real.h \
 autograd/../core/shape.h autograd/../core/blas.h \
 autograd/../core/error.h autograd/../core/parallel.h autograd/arith.h \
 autograd/linalg.h autograd/node.h autograd/../core/allocator.h \
 autograd/grad_mode.h autograd/shape_ops.h autograd/indexing.h \
 autograd/views.h
autograd/linear_op.h:
autograd/../core/tensor.h:
autograd/../core/real.h:
autograd/../core/shape.h:
autograd/../core/blas.h:
autograd/../core/error.h:
autograd/../core/parallel.h:
autograd/arith.h:
autograd/linalg.h:
autograd/node.h:
autograd/../core/allocator.h:
autograd/grad_mode.h:
autograd/shape_ops.h:
autograd/indexing.h:
autograd/views.h:
