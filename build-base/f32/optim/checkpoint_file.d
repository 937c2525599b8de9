build-base/f32/optim/checkpoint_file.o: optim/checkpoint_file.cpp \
 optim/checkpoint_file.h optim/../layers/module.h \
 optim/../layers/../core/tensor.h optim/../layers/../core/real.h \
 optim/../layers/../core/shape.h optim/optimizer.h \
 optim/../autograd/grad_mode.h optim/../core/error.h
optim/checkpoint_file.h:
optim/../layers/module.h:
optim/../layers/../core/tensor.h:
optim/../layers/../core/real.h:
optim/../layers/../core/shape.h:
optim/optimizer.h:
optim/../autograd/grad_mode.h:
optim/../core/error.h:
