build-base/f32/optim/adam.o: optim/adam.cpp optim/adam.h optim/optimizer.h \
 optim/../core/tensor.h optim/../core/real.h optim/../core/shape.h \
 optim/../core/error.h optim/../core/parallel.h
optim/adam.h:
optim/optimizer.h:
optim/../core/tensor.h:
optim/../core/real.h:
optim/../core/shape.h:
optim/../core/error.h:
optim/../core/parallel.h:
