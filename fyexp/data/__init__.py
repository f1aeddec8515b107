"""Dataset loaders behind one data root (``--data-dir`` / ``FYEXP_DATA_DIR``); downloads when online."""
