build-base/f32/autograd/alibi.o: autograd/alibi.cpp autograd/alibi.h \
 autograd/attention_mask.h autograd/../core/tensor.h \
 autograd/../core/real.h autograd/../core/shape.h \
 autograd/../core/error.h
autograd/alibi.h:
autograd/attention_mask.h:
autograd/../core/tensor.h:
autograd/../core/real.h:
autograd/../core/shape.h:
autograd/../core/error.h:
