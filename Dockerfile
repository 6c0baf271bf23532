# syntax=docker/dockerfile:1
#
# The image the sweep-cluster chart runs: Ray head, Ray workers and the results dashboard.
#
#   docker build -t sweeps:0.1.0 .        # the tag is the project version (pyproject.toml)
#
# Python and the pinned packages below are the versions the project is developed and tested with;
# each lies inside pyproject.toml's ranges (tests/test_chart_image.py checks that, and that
# RAY_VERSION equals the chart's rayVersion). A local `ray job submit` should use the same Ray.

ARG PYTHON_IMAGE=python:3.11.13-slim-bookworm
FROM ${PYTHON_IMAGE}

ARG RAY_VERSION=2.60.0
ARG NUMPY_VERSION=2.4.6
ARG NUMBA_VERSION=0.68.1
ARG PYARROW_VERSION=26.0.1

# wget: the chart's readiness and liveness probes, the workers' wait for the head, and KubeRay's
# own probes all call it.
RUN apt-get update \
    && apt-get install -y --no-install-recommends wget \
    && rm -rf /var/lib/apt/lists/*

# uid/gid 1000, as the chart's podSecurityContext (runAsUser: 1000) and KubeRay's images expect.
RUN groupadd --gid 1000 ray \
    && useradd --uid 1000 --gid 1000 --create-home --shell /bin/bash ray

ENV VIRTUAL_ENV=/opt/venv \
    PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
RUN python -m venv /opt/venv

# The heavy dependencies in their own layer, from wheels only, so that a code change does not
# reinstall Ray.
RUN pip install --only-binary=:all: \
        "ray[default]==${RAY_VERSION}" \
        "numpy==${NUMPY_VERSION}" \
        "numba==${NUMBA_VERSION}" \
        "pyarrow==${PYARROW_VERSION}"

# The project, installed; its source stays in /app, the containers' working directory, so
# `python sweeps/exp4c.py` also works from `kubectl exec`.
WORKDIR /app
COPY . /app
RUN pip install . \
    && python -c "import ray, simcore, ray_jobs, dashboards, sweeps, commit_sweeps, store_probe; \
assert ray.__version__ == '${RAY_VERSION}', ray.__version__; print('ray', ray.__version__, 'simcore', simcore.__version__)"

# Numeric, so Kubernetes can check runAsNonRoot without reading /etc/passwd. Ray and numba keep
# their caches under HOME.
ENV HOME=/home/ray
USER 1000:1000

# Ray head: GCS, dashboard and job API, client. Dashboard: 8080. (Documentation only.)
EXPOSE 6379 8265 10001 8080

# The chart always names each container's command; a bare `docker run` gets a shell.
CMD ["bash"]
