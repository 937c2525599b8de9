build-base/f32/optim/schedule.o: optim/schedule.cpp optim/schedule.h \
 optim/optimizer.h optim/../core/tensor.h optim/../core/real.h \
 optim/../core/shape.h optim/../core/error.h
optim/schedule.h:
optim/optimizer.h:
optim/../core/tensor.h:
optim/../core/real.h:
optim/../core/shape.h:
optim/../core/error.h:
