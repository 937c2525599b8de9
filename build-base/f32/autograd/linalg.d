build-base/f32/autograd/linalg.o: autograd/linalg.cpp autograd/linalg.h \
 autograd/../core/tensor.h autograd/../core/real.h \
 autograd/../core/shape.h autograd/../core/blas.h \
 autograd/../core/elementwise.h autograd/../core/fastmath.h \
 autograd/../core/parallel.h autograd/../core/error.h autograd/node.h \
 autograd/../core/allocator.h autograd/grad_mode.h autograd/reduce.h \
 autograd/reduce_minmax.h
autograd/linalg.h:
autograd/../core/tensor.h:
autograd/../core/real.h:
autograd/../core/shape.h:
autograd/../core/blas.h:
autograd/../core/elementwise.h:
autograd/../core/fastmath.h:
autograd/../core/parallel.h:
autograd/../core/error.h:
autograd/node.h:
autograd/../core/allocator.h:
autograd/grad_mode.h:
autograd/reduce.h:
autograd/reduce_minmax.h:
