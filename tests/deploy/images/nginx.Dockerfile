# Test stand-in for the public nginx image compose.yaml names (no registry is reachable in CI):
# Debian's nginx on the same base, with the official image's command. compose.yaml mounts its own
# nginx.conf over /etc/nginx/nginx.conf either way.
ARG BASE_IMAGE=debian:bookworm-slim
FROM ${BASE_IMAGE}
RUN apt-get update && apt-get install -y --no-install-recommends nginx-light \
    && rm -rf /var/lib/apt/lists/*
STOPSIGNAL SIGQUIT
CMD ["nginx", "-g", "daemon off;"]
