build-base/f32/autograd/attend.o: autograd/attend.cpp autograd/attend.h \
 autograd/attention_mask.h autograd/../core/tensor.h \
 autograd/../core/real.h autograd/../core/shape.h \
 autograd/../core/error.h autograd/compare.h autograd/dropout_op.h \
 autograd/linalg.h autograd/softmax.h
autograd/attend.h:
autograd/attention_mask.h:
autograd/../core/tensor.h:
autograd/../core/real.h:
autograd/../core/shape.h:
autograd/../core/error.h:
autograd/compare.h:
autograd/dropout_op.h:
autograd/linalg.h:
autograd/softmax.h:
