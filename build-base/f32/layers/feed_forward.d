build-base/f32/layers/feed_forward.o: layers/feed_forward.cpp \
 layers/feed_forward.h layers/dropout.h layers/module.h \
 layers/../core/tensor.h layers/../core/real.h layers/../core/shape.h \
 layers/linear.h layers/../autograd/unary.h layers/../core/error.h \
 layers/repr.h
layers/feed_forward.h:
layers/dropout.h:
layers/module.h:
layers/../core/tensor.h:
layers/../core/real.h:
layers/../core/shape.h:
layers/linear.h:
layers/../autograd/unary.h:
layers/../core/error.h:
layers/repr.h:
