build-base/f32/autograd/chunked_attention.o: autograd/chunked_attention.cpp \
 autograd/chunked_attention.h autograd/attention_mask.h \
 autograd/../core/tensor.h autograd/../core/real.h \
 autograd/../core/shape.h autograd/../core/error.h autograd/arith.h \
 autograd/recompute.h autograd/scaled_dot_product.h autograd/attend.h \
 autograd/shape_ops.h autograd/indexing.h autograd/views.h
autograd/chunked_attention.h:
autograd/attention_mask.h:
autograd/../core/tensor.h:
autograd/../core/real.h:
autograd/../core/shape.h:
autograd/../core/error.h:
autograd/arith.h:
autograd/recompute.h:
autograd/scaled_dot_product.h:
autograd/attend.h:
autograd/shape_ops.h:
autograd/indexing.h:
autograd/views.h:
