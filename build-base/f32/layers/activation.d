build-base/f32/layers/activation.o: layers/activation.cpp layers/activation.h \
 layers/module.h layers/../core/tensor.h layers/../core/real.h \
 layers/../core/shape.h layers/../autograd/unary.h layers/../core/error.h \
 layers/repr.h
layers/activation.h:
layers/module.h:
layers/../core/tensor.h:
layers/../core/real.h:
layers/../core/shape.h:
layers/../autograd/unary.h:
layers/../core/error.h:
layers/repr.h:
