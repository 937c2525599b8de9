build-base/f32/autograd/views.o: autograd/views.cpp autograd/views.h \
 autograd/../core/tensor.h autograd/../core/real.h \
 autograd/../core/shape.h autograd/../core/error.h autograd/node.h \
 autograd/../core/allocator.h autograd/grad_mode.h autograd/shape_ops.h \
 autograd/indexing.h
autograd/views.h:
autograd/../core/tensor.h:
autograd/../core/real.h:
autograd/../core/shape.h:
autograd/../core/error.h:
autograd/node.h:
autograd/../core/allocator.h:
autograd/grad_mode.h:
autograd/shape_ops.h:
autograd/indexing.h:
