build-base/f32/autograd/indexing.o: autograd/indexing.cpp autograd/indexing.h \
 autograd/../core/tensor.h autograd/../core/real.h \
 autograd/../core/shape.h autograd/../core/error.h \
 autograd/../core/parallel.h autograd/node.h autograd/../core/allocator.h \
 autograd/grad_mode.h autograd/shape_ops.h autograd/views.h
autograd/indexing.h:
autograd/../core/tensor.h:
autograd/../core/real.h:
autograd/../core/shape.h:
autograd/../core/error.h:
autograd/../core/parallel.h:
autograd/node.h:
autograd/../core/allocator.h:
autograd/grad_mode.h:
autograd/shape_ops.h:
autograd/views.h:
