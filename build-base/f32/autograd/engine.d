build-base/f32/autograd/engine.o: autograd/engine.cpp autograd/../core/error.h \
 autograd/anomaly_mode.h autograd/../core/tensor.h \
 autograd/../core/real.h autograd/../core/shape.h autograd/arith.h \
 autograd/node.h autograd/../core/allocator.h autograd/grad_mode.h
autograd/../core/error.h:
autograd/anomaly_mode.h:
autograd/../core/tensor.h:
autograd/../core/real.h:
autograd/../core/shape.h:
autograd/arith.h:
autograd/node.h:
autograd/../core/allocator.h:
autograd/grad_mode.h:
