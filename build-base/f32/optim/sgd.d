build-base/f32/optim/sgd.o: optim/sgd.cpp optim/sgd.h optim/optimizer.h \
 optim/../core/tensor.h optim/../core/real.h optim/../core/shape.h \
 optim/../core/error.h optim/../core/parallel.h
optim/sgd.h:
optim/optimizer.h:
optim/../core/tensor.h:
optim/../core/real.h:
optim/../core/shape.h:
optim/../core/error.h:
optim/../core/parallel.h:
