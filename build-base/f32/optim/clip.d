build-base/f32/optim/clip.o: optim/clip.cpp optim/clip.h \
 optim/../core/tensor.h optim/../core/real.h optim/../core/shape.h \
 optim/../core/error.h optim/../core/parallel.h
optim/clip.h:
optim/../core/tensor.h:
optim/../core/real.h:
optim/../core/shape.h:
optim/../core/error.h:
optim/../core/parallel.h:
