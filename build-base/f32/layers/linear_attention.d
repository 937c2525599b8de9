build-base/f32/layers/linear_attention.o: layers/linear_attention.cpp \
 layers/linear_attention.h layers/../autograd/attend.h \
 layers/../autograd/attention_mask.h layers/../autograd/../core/tensor.h \
 layers/../autograd/../core/real.h layers/../autograd/../core/shape.h \
 layers/linear.h layers/module.h layers/../autograd/linear_attention.h \
 layers/../core/error.h layers/repr.h
layers/linear_attention.h:
layers/../autograd/attend.h:
layers/../autograd/attention_mask.h:
layers/../autograd/../core/tensor.h:
layers/../autograd/../core/real.h:
layers/../autograd/../core/shape.h:
layers/linear.h:
layers/module.h:
layers/../autograd/linear_attention.h:
layers/../core/error.h:
layers/repr.h:
