build-base/f32/autograd/unary.o: autograd/unary.cpp autograd/unary.h \
 autograd/../core/tensor.h autograd/../core/real.h \
 autograd/../core/shape.h autograd/../core/elementwise.h \
 autograd/../core/fastmath.h autograd/../core/parallel.h \
 autograd/../core/error.h autograd/node.h autograd/../core/allocator.h \
 autograd/grad_mode.h
autograd/unary.h:
autograd/../core/tensor.h:
autograd/../core/real.h:
autograd/../core/shape.h:
autograd/../core/elementwise.h:
autograd/../core/fastmath.h:
autograd/../core/parallel.h:
autograd/../core/error.h:
autograd/node.h:
autograd/../core/allocator.h:
autograd/grad_mode.h:
