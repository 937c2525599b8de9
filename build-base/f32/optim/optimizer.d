build-base/f32/optim/optimizer.o: optim/optimizer.cpp optim/optimizer.h \
 optim/../core/tensor.h optim/../core/real.h optim/../core/shape.h \
 optim/../autograd/grad_mode.h optim/../core/error.h
optim/optimizer.h:
optim/../core/tensor.h:
optim/../core/real.h:
optim/../core/shape.h:
optim/../autograd/grad_mode.h:
optim/../core/error.h:
