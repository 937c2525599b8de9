build-base/f32/layers/loss.o: layers/loss.cpp layers/loss.h \
 layers/../autograd/loss_ops.h layers/../autograd/../core/tensor.h \
 layers/../autograd/../core/real.h layers/../autograd/../core/shape.h \
 layers/module.h layers/repr.h
layers/loss.h:
layers/../autograd/loss_ops.h:
layers/../autograd/../core/tensor.h:
layers/../autograd/../core/real.h:
layers/../autograd/../core/shape.h:
layers/module.h:
layers/repr.h:
