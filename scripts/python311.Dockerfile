# Registry path for the base sandbox image (make images uses debootstrap + docker import
# when no registry is reachable). Both produce the same contents.
FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-pytest python-is-python3 \
      git patch bash coreutils ca-certificates procps passwd \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --create-home --uid 1000 --shell /bin/bash agent \
 && git config --system --add safe.directory '*'
ENV LANG=C.UTF-8 PYTHONDONTWRITEBYTECODE=1
CMD ["/bin/bash"]
