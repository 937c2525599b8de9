build-base/f32/autograd/embedding_op.o: autograd/embedding_op.cpp \
 autograd/embedding_op.h autograd/../core/tensor.h \
 autograd/../core/real.h autograd/../core/shape.h \
 autograd/../core/error.h autograd/../core/parallel.h autograd/node.h \
 autograd/../core/allocator.h autograd/grad_mode.h
autograd/embedding_op.h:
autograd/../core/tensor.h:
autograd/../core/real.h:
autograd/../core/shape.h:
autograd/../core/error.h:
autograd/../core/parallel.h:
autograd/node.h:
autograd/../core/allocator.h:
autograd/grad_mode.h:
