build-base/f32/autograd/to_dot.o: autograd/to_dot.cpp autograd/to_dot.h \
 autograd/../core/tensor.h autograd/../core/real.h \
 autograd/../core/shape.h autograd/../core/error.h autograd/node.h \
 autograd/../core/allocator.h autograd/grad_mode.h
autograd/to_dot.h:
autograd/../core/tensor.h:
autograd/../core/real.h:
autograd/../core/shape.h:
autograd/../core/error.h:
autograd/node.h:
autograd/../core/allocator.h:
autograd/grad_mode.h:
