build-base/f32/layers/transformer.o: layers/transformer.cpp \
 layers/transformer.h layers/module.h layers/../core/tensor.h \
 layers/../core/real.h layers/../core/shape.h layers/../core/error.h \
 layers/feed_forward.h layers/dropout.h layers/linear.h layers/repr.h
layers/transformer.h:
layers/module.h:
layers/../core/tensor.h:
layers/../core/real.h:
layers/../core/shape.h:
layers/../core/error.h:
layers/feed_forward.h:
layers/dropout.h:
layers/linear.h:
layers/repr.h:
