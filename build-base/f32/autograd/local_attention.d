build-base/f32/autograd/local_attention.o: autograd/local_attention.cpp \
 autograd/local_attention.h autograd/attend.h autograd/attention_mask.h \
 autograd/../core/tensor.h autograd/../core/real.h \
 autograd/../core/shape.h autograd/../core/error.h autograd/arith.h \
 autograd/compare.h autograd/dropout_op.h autograd/linalg.h \
 autograd/unary.h
autograd/local_attention.h:
autograd/attend.h:
autograd/attention_mask.h:
autograd/../core/tensor.h:
autograd/../core/real.h:
autograd/../core/shape.h:
autograd/../core/error.h:
autograd/arith.h:
autograd/compare.h:
autograd/dropout_op.h:
autograd/linalg.h:
autograd/unary.h:
