build-base/f32/layers/module.o: layers/module.cpp layers/module.h \
 layers/../core/tensor.h layers/../core/real.h layers/../core/shape.h \
 layers/../core/error.h
layers/module.h:
layers/../core/tensor.h:
layers/../core/real.h:
layers/../core/shape.h:
layers/../core/error.h:
