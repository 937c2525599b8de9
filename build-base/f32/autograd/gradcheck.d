build-base/f32/autograd/gradcheck.o: autograd/gradcheck.cpp \
 autograd/gradcheck.h autograd/../core/tensor.h autograd/../core/real.h \
 autograd/../core/shape.h autograd/arith.h autograd/grad_mode.h \
 autograd/reduce.h autograd/reduce_minmax.h
autograd/gradcheck.h:
autograd/../core/tensor.h:
autograd/../core/real.h:
autograd/../core/shape.h:
autograd/arith.h:
autograd/grad_mode.h:
autograd/reduce.h:
autograd/reduce_minmax.h:
