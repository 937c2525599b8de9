build-base/f32/autograd/lstm_cell_op.o: autograd/lstm_cell_op.cpp \
 autograd/lstm_cell_op.h autograd/../core/tensor.h \
 autograd/../core/real.h autograd/../core/shape.h autograd/../core/blas.h \
 autograd/../core/error.h autograd/../core/parallel.h autograd/arith.h \
 autograd/linalg.h autograd/lstm_gates.h autograd/../core/fastmath.h \
 autograd/node.h autograd/../core/allocator.h autograd/grad_mode.h \
 autograd/reduce.h autograd/reduce_minmax.h autograd/shape_ops.h \
 autograd/indexing.h autograd/views.h autograd/unary.h
autograd/lstm_cell_op.h:
autograd/../core/tensor.h:
autograd/../core/real.h:
autograd/../core/shape.h:
autograd/../core/blas.h:
autograd/../core/error.h:
autograd/../core/parallel.h:
autograd/arith.h:
autograd/linalg.h:
autograd/lstm_gates.h:
autograd/../core/fastmath.h:
autograd/node.h:
autograd/../core/allocator.h:
autograd/grad_mode.h:
autograd/reduce.h:
autograd/reduce_minmax.h:
autograd/shape_ops.h:
autograd/indexing.h:
autograd/views.h:
autograd/unary.h:
