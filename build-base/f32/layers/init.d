build-base/f32/layers/init.o: layers/init.cpp layers/init.h \
 layers/../core/tensor.h layers/../core/real.h layers/../core/shape.h \
 layers/../autograd/grad_mode.h layers/../core/error.h \
 layers/../core/random.h
layers/init.h:
layers/../core/tensor.h:
layers/../core/real.h:
layers/../core/shape.h:
layers/../autograd/grad_mode.h:
layers/../core/error.h:
layers/../core/random.h:
