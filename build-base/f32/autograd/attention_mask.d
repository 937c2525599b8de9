build-base/f32/autograd/attention_mask.o: autograd/attention_mask.cpp \
 autograd/attention_mask.h autograd/../core/tensor.h \
 autograd/../core/real.h autograd/../core/shape.h \
 autograd/../core/error.h autograd/arith.h autograd/compare.h
autograd/attention_mask.h:
autograd/../core/tensor.h:
autograd/../core/real.h:
autograd/../core/shape.h:
autograd/../core/error.h:
autograd/arith.h:
autograd/compare.h:
