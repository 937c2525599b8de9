build-base/f32/layers/scaled_dot_product.o: layers/scaled_dot_product.cpp \
 layers/scaled_dot_product.h layers/../autograd/scaled_dot_product.h \
 layers/../autograd/attend.h layers/../autograd/attention_mask.h \
 layers/../autograd/../core/tensor.h layers/../autograd/../core/real.h \
 layers/../autograd/../core/shape.h layers/module.h \
 layers/../core/error.h layers/repr.h
layers/scaled_dot_product.h:
layers/../autograd/scaled_dot_product.h:
layers/../autograd/attend.h:
layers/../autograd/attention_mask.h:
layers/../autograd/../core/tensor.h:
layers/../autograd/../core/real.h:
layers/../autograd/../core/shape.h:
layers/module.h:
layers/../core/error.h:
layers/repr.h:
