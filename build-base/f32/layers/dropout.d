build-base/f32/layers/dropout.o: layers/dropout.cpp layers/dropout.h \
 layers/module.h layers/../core/tensor.h layers/../core/real.h \
 layers/../core/shape.h layers/../autograd/dropout_op.h \
 layers/../core/error.h layers/repr.h
layers/dropout.h:
layers/module.h:
layers/../core/tensor.h:
layers/../core/real.h:
layers/../core/shape.h:
layers/../autograd/dropout_op.h:
layers/../core/error.h:
layers/repr.h:
