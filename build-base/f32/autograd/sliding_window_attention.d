build-base/f32/autograd/sliding_window_attention.o: \
 autograd/sliding_window_attention.cpp \
 autograd/sliding_window_attention.h autograd/attention_mask.h \
 autograd/../core/tensor.h autograd/../core/real.h \
 autograd/../core/shape.h autograd/../core/error.h autograd/arith.h \
 autograd/attend.h autograd/linalg.h autograd/scaled_dot_product.h \
 autograd/shape_ops.h autograd/indexing.h autograd/views.h
autograd/sliding_window_attention.h:
autograd/attention_mask.h:
autograd/../core/tensor.h:
autograd/../core/real.h:
autograd/../core/shape.h:
autograd/../core/error.h:
autograd/arith.h:
autograd/attend.h:
autograd/linalg.h:
autograd/scaled_dot_product.h:
autograd/shape_ops.h:
autograd/indexing.h:
autograd/views.h:
