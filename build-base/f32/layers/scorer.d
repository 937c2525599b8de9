build-base/f32/layers/scorer.o: layers/scorer.cpp layers/scorer.h \
 layers/../autograd/attend.h layers/../autograd/attention_mask.h \
 layers/../autograd/../core/tensor.h layers/../autograd/../core/real.h \
 layers/../autograd/../core/shape.h layers/../core/error.h
layers/scorer.h:
layers/../autograd/attend.h:
layers/../autograd/attention_mask.h:
layers/../autograd/../core/tensor.h:
layers/../autograd/../core/real.h:
layers/../autograd/../core/shape.h:
layers/../core/error.h:
