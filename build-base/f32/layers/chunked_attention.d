build-base/f32/layers/chunked_attention.o: layers/chunked_attention.cpp \
 layers/chunked_attention.h layers/../autograd/chunked_attention.h \
 layers/../autograd/attention_mask.h layers/../autograd/../core/tensor.h \
 layers/../autograd/../core/real.h layers/../autograd/../core/shape.h \
 layers/module.h layers/../core/error.h layers/repr.h
layers/chunked_attention.h:
layers/../autograd/chunked_attention.h:
layers/../autograd/attention_mask.h:
layers/../autograd/../core/tensor.h:
layers/../autograd/../core/real.h:
layers/../autograd/../core/shape.h:
layers/module.h:
layers/../core/error.h:
layers/repr.h:
