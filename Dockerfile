# fyexp in a container. Build:  docker build -t fyexp .
# Run (results come out through the mounted folder):
#   docker run --rm -v "$PWD/results:/app/results" fyexp fyexp run gmm-clustering --yes
#   (--yes: the image holds no recorded wall times, so a paper-profile plan cannot be estimated and would ask)
# Datasets for the neural experiments: add -v /path/to/data:/data (FYEXP_DATA_DIR points there).
ARG BASE=python:3.11-slim
FROM ${BASE}

ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONUNBUFFERED=1 \
    VIRTUAL_ENV=/opt/venv PATH=/opt/venv/bin:$PATH \
    FYEXP_DATA_DIR=/data MPLBACKEND=Agg
RUN python3 -m venv /opt/venv && mkdir -p /data
WORKDIR /app
# the tested environment from the lock first (a cached layer: it changes only when the lock does) ...
COPY requirements.lock ./
RUN pip install --no-deps -r requirements.lock
# ... then fyexp itself, without touching those pinned dependencies
COPY pyproject.toml README.md ./
COPY fyexp ./fyexp
COPY experiments ./experiments
COPY scripts ./scripts
RUN pip install --no-deps -e . && fyexp --version
VOLUME ["/app/results"]
CMD ["fyexp", "list"]
