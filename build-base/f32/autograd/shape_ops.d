build-base/f32/autograd/shape_ops.o: autograd/shape_ops.cpp \
 autograd/../core/error.h autograd/../core/parallel.h autograd/node.h \
 autograd/../core/allocator.h autograd/../core/tensor.h \
 autograd/../core/real.h autograd/../core/shape.h autograd/grad_mode.h \
 autograd/shape_ops.h autograd/indexing.h autograd/views.h
autograd/../core/error.h:
autograd/../core/parallel.h:
autograd/node.h:
autograd/../core/allocator.h:
autograd/../core/tensor.h:
autograd/../core/real.h:
autograd/../core/shape.h:
autograd/grad_mode.h:
autograd/shape_ops.h:
autograd/indexing.h:
autograd/views.h:
