build-base/f32/autograd/scaled_dot_product.o: autograd/scaled_dot_product.cpp \
 autograd/scaled_dot_product.h autograd/attend.h \
 autograd/attention_mask.h autograd/../core/tensor.h \
 autograd/../core/real.h autograd/../core/shape.h \
 autograd/../core/error.h autograd/arith.h autograd/linalg.h
autograd/scaled_dot_product.h:
autograd/attend.h:
autograd/attention_mask.h:
autograd/../core/tensor.h:
autograd/../core/real.h:
autograd/../core/shape.h:
autograd/../core/error.h:
autograd/arith.h:
autograd/linalg.h:
