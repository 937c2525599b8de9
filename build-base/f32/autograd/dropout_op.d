build-base/f32/autograd/dropout_op.o: autograd/dropout_op.cpp \
 autograd/dropout_op.h autograd/../core/tensor.h autograd/../core/real.h \
 autograd/../core/shape.h autograd/../core/elementwise.h \
 autograd/../core/fastmath.h autograd/../core/parallel.h \
 autograd/../core/error.h autograd/../core/random.h autograd/node.h \
 autograd/../core/allocator.h autograd/grad_mode.h
autograd/dropout_op.h:
autograd/../core/tensor.h:
autograd/../core/real.h:
autograd/../core/shape.h:
autograd/../core/elementwise.h:
autograd/../core/fastmath.h:
autograd/../core/parallel.h:
autograd/../core/error.h:
autograd/../core/random.h:
autograd/node.h:
autograd/../core/allocator.h:
autograd/grad_mode.h:
