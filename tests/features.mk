# tests/features.mk: unit tests of feature-section decoding
