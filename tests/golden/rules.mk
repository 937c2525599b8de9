# tests/golden/rules.mk - make goldens (included by the top-level Makefile).
# Regenerates tests/golden/*.bin with PyTorch (/usr/bin/python3 and python3-torch); the
# committed .bin files keep `make test` free of it.
goldens:
	@for g in tests/golden/gen_*.py; do echo "/usr/bin/python3 $$g"; /usr/bin/python3 $$g || exit 1; done
