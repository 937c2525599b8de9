build-base/f32/autograd/sparse_attention.o: autograd/sparse_attention.cpp \
 autograd/sparse_attention.h autograd/attend.h autograd/attention_mask.h \
 autograd/../core/tensor.h autograd/../core/real.h \
 autograd/../core/shape.h autograd/../core/error.h autograd/arith.h \
 autograd/scaled_dot_product.h autograd/sliding_window_attention.h
autograd/sparse_attention.h:
autograd/attend.h:
autograd/attention_mask.h:
autograd/../core/tensor.h:
autograd/../core/real.h:
autograd/../core/shape.h:
autograd/../core/error.h:
autograd/arith.h:
autograd/scaled_dot_product.h:
autograd/sliding_window_attention.h:
