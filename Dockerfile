# The gpuemu image: the GitHub Action (action.yml runs it) and a container for CI systems in general.
# Stage 1 builds the static binary with scripts/build-static.sh on Debian 12; stage 2 is a slim Debian
# with Python 3 and numpy for reference scripts. GitHub's rules for Docker actions: run as root (no
# USER), no WORKDIR (the runner mounts the workspace and starts there), an exec-form ENTRYPOINT.

FROM debian:12 AS build
# build-static.sh installs the Debian packages it needs (static .a libraries, dpkg-dev for
# `apt-get source curl`), builds a minimal libcurl and then build-static/gpuemu, and checks with ldd
# that the result has no shared-library dependencies.
COPY . /src
RUN /src/scripts/build-static.sh \
 && /src/build-static/gpuemu version

FROM debian:12-slim
# python3 and numpy run the projects' reference and op scripts; ca-certificates lets the static
# libcurl verify HTTPS baseline stores (it looks in /etc/ssl/certs).
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      python3 python3-numpy ca-certificates \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/build-static/gpuemu /usr/local/bin/gpuemu
# gpuemu's Python package (warm workers, gpuemu.script for op and reference scripts) where the
# binary looks for it: PREFIX/share/gpuemu/python next to PREFIX/bin/gpuemu.
COPY python/gpuemu /usr/local/share/gpuemu/python/gpuemu
COPY docker/entrypoint.py /usr/local/bin/gpuemu-action
RUN chmod 0755 /usr/local/bin/gpuemu-action \
 && gpuemu version
ENTRYPOINT ["/usr/local/bin/gpuemu-action"]
