# fyexp in a container. Build:  docker build -t fyexp .
# Run (results come out through the mounted folder):
#   docker run --rm -v "$PWD/results:/app/results" fyexp fyexp run gmm-clustering
# Datasets for the neural experiments: add -v /path/to/data:/data (FYEXP_DATA_DIR points there).
ARG BASE=python:3.11-slim
FROM ${BASE}

# A CPU-only torch keeps the image small; leave empty to take PyPI's default (CUDA) build.
ARG TORCH_INDEX_URL=""
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONUNBUFFERED=1 \
    VIRTUAL_ENV=/opt/venv PATH=/opt/venv/bin:$PATH \
    FYEXP_DATA_DIR=/data MPLBACKEND=Agg
RUN python3 -m venv /opt/venv && mkdir -p /data
WORKDIR /app
# dependencies first (a cached layer), from pyproject.toml with a stub package; then the code itself
COPY pyproject.toml README.md ./
RUN mkdir -p fyexp && touch fyexp/__init__.py \
    && if [ -n "$TORCH_INDEX_URL" ]; then pip install torch torchvision --index-url "$TORCH_INDEX_URL"; fi \
    && pip install -e .
COPY fyexp ./fyexp
COPY experiments ./experiments
COPY scripts ./scripts
VOLUME ["/app/results"]
CMD ["fyexp", "list"]
