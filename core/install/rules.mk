# core/install/rules.mk - make install, install-mpi and uninstall (included by the top-level
# Makefile). The files installed beside the headers and libraries are generated from the
# templates in this folder: each @NAME@ is replaced by the value below (`configure`).
#   heed.pc, heed-mpi.pc        pkg-config; heed-mpi.pc requires heed.pc
#   heedConfig.cmake            CMake's find_package(heed): defines heed::heed (and
#                               heed::heed_mpi when libheed_mpi.a is installed beside it); the
#                               prefix is found from the file's own place, so an installed
#                               tree can be moved
#   heedConfigVersion.cmake     0.x: a new minor version may change the API, so asking for
#                               0.N accepts 0.N.x only; from 1.0 on, the same major version
#                               and no older than asked
# HEED_VERSION (core/version.h) is read by the top-level Makefile; check-install
# (tests/install/rules.mk) proves the installed files agree with it.
configure = sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@BLAS_LIB@|$(BLAS_LIB)|g' \
  -e 's|@HEED_VERSION@|$(HEED_VERSION)|g' \
  -e 's|@HEED_VERSION_MAJOR@|$(word 1,$(subst ., ,$(HEED_VERSION)))|g' \
  -e 's|@HEED_VERSION_MINOR@|$(word 2,$(subst ., ,$(HEED_VERSION)))|g' core/install/$(1).in > $(2)/$(1)

# Headers keep their folders: core/tensor.h goes to $(PREFIX)/include/heed/core/tensor.h.
install_headers = for h in $(1); do \
	  mkdir -p $(DESTDIR)$(PREFIX)/include/heed/$$(dirname $$h); \
	  install -m 644 $$h $(DESTDIR)$(PREFIX)/include/heed/$$h; \
	done

install: $(BUILD)/libheed.a $(UMBRELLA)
	@$(call install_headers,$(HEADERS) $(COMPAT_HEADERS))
	install -m 644 $(UMBRELLA) $(DESTDIR)$(PREFIX)/include/heed/heed.h
	install -d $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/lib/cmake/heed
	install -m 644 $(BUILD)/libheed.a $(DESTDIR)$(PREFIX)/lib/
	@$(call configure,heed.pc,$(DESTDIR)$(PREFIX)/lib/pkgconfig)
	@$(call configure,heedConfig.cmake,$(DESTDIR)$(PREFIX)/lib/cmake/heed)
	@$(call configure,heedConfigVersion.cmake,$(DESTDIR)$(PREFIX)/lib/cmake/heed)

install-mpi: $(BUILD)/libheed_mpi.a $(UMBRELLA)
	@$(call install_headers,$(MPI_HEADERS))
	install -d $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 644 $(BUILD)/libheed_mpi.a $(DESTDIR)$(PREFIX)/lib/
	@$(call configure,heed-mpi.pc,$(DESTDIR)$(PREFIX)/lib/pkgconfig)

uninstall:
	rm -rf $(DESTDIR)$(PREFIX)/include/heed
	rm -f $(DESTDIR)$(PREFIX)/lib/libheed.a $(DESTDIR)$(PREFIX)/lib/pkgconfig/heed.pc
	rm -rf $(DESTDIR)$(PREFIX)/lib/cmake/heed
	rm -f $(DESTDIR)$(PREFIX)/lib/libheed_mpi.a $(DESTDIR)$(PREFIX)/lib/pkgconfig/heed-mpi.pc
