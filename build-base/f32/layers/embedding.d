build-base/f32/layers/embedding.o: layers/embedding.cpp layers/embedding.h \
 layers/module.h layers/../core/tensor.h layers/../core/real.h \
 layers/../core/shape.h layers/../autograd/embedding_op.h \
 layers/../core/error.h layers/init.h
layers/embedding.h:
layers/module.h:
layers/../core/tensor.h:
layers/../core/real.h:
layers/../core/shape.h:
layers/../autograd/embedding_op.h:
layers/../core/error.h:
layers/init.h:
