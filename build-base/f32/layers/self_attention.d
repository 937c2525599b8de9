build-base/f32/layers/self_attention.o: layers/self_attention.cpp \
 layers/self_attention.h layers/../autograd/attend.h \
 layers/../autograd/attention_mask.h layers/../autograd/../core/tensor.h \
 layers/../autograd/../core/real.h layers/../autograd/../core/shape.h \
 layers/linear.h layers/module.h layers/../autograd/scaled_dot_product.h \
 layers/../core/error.h layers/repr.h
layers/self_attention.h:
layers/../autograd/attend.h:
layers/../autograd/attention_mask.h:
layers/../autograd/../core/tensor.h:
layers/../autograd/../core/real.h:
layers/../autograd/../core/shape.h:
layers/linear.h:
layers/module.h:
layers/../autograd/scaled_dot_product.h:
layers/../core/error.h:
layers/repr.h:
