build-base/f32/layers/sparse_attention.o: layers/sparse_attention.cpp \
 layers/sparse_attention.h layers/../autograd/sparse_attention.h \
 layers/../autograd/attend.h layers/../autograd/attention_mask.h \
 layers/../autograd/../core/tensor.h layers/../autograd/../core/real.h \
 layers/../autograd/../core/shape.h layers/module.h \
 layers/../core/error.h layers/repr.h
layers/sparse_attention.h:
layers/../autograd/sparse_attention.h:
layers/../autograd/attend.h:
layers/../autograd/attention_mask.h:
layers/../autograd/../core/tensor.h:
layers/../autograd/../core/real.h:
layers/../autograd/../core/shape.h:
layers/module.h:
layers/../core/error.h:
layers/repr.h:
