//! File store tests that need no codec fixtures; the end-to-end ones are in `tests/`.
