# petstore-conformance as a container image: the binary, its shared libraries and the CA
# certificates, run as a non-root user; reports go to /reports (mount a directory there).
#
#   docker build -t petstore-conformance .
#   docker run --rm -v "$PWD/reports:/reports" --user "$(id -u):$(id -g)" \
#       -e PETSTORE_API_KEY petstore-conformance run --base-url https://staging.example/v1
#
# Without arguments it runs the suite against its built-in reference server (a smoke test).
# ROOTFS names the image whose /rootfs the final stage copies: the build stage below, or a
# root filesystem made outside (tests/it/delivery/docker.rs imports one built by docker/rootfs.sh on the host,
# on a machine that cannot pull the build image).
ARG ROOTFS=build

# Debian bookworm: glibc 2.36 inside the image, whatever the host has.
FROM rust:1.89-slim-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked \
    && sh docker/rootfs.sh target/release/petstore-conformance /rootfs

FROM ${ROOTFS} AS rootfs

FROM scratch AS image
COPY --from=rootfs /rootfs/ /
ENV PATH=/usr/local/bin \
    SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt \
    PETSTORE_REPORT_DIR=/reports
USER 65532:65532
# A profile file (petstore-conformance.toml) is read from here: mount the project at /work.
WORKDIR /work
VOLUME /reports
ENTRYPOINT ["/usr/local/bin/petstore-conformance"]
CMD ["run"]

# The image for CI systems whose jobs run a shell script inside the image (GitLab): the same
# binary on Debian slim, with sh and curl (ci/gate.sh, fetching last night's report). Tagged
# VERSION-ci by the release workflow. It runs as root: GitLab's checkout, where reports/ is
# written, belongs to root.
FROM debian:bookworm-slim AS ci
RUN command -v curl >/dev/null || { apt-get update \
        && apt-get install -y --no-install-recommends curl ca-certificates \
        && rm -rf /var/lib/apt/lists/*; }
COPY --from=rootfs /rootfs/usr/local/bin/petstore-conformance /usr/local/bin/petstore-conformance
ENTRYPOINT []
CMD ["petstore-conformance", "--help"]

# The default target: the minimal image.
FROM image
