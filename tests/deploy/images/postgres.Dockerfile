# Test stand-in for the public postgres image compose.postgres.yaml names (no registry is
# reachable in CI): Debian's PostgreSQL 15 on the same base, with the parts of the official
# image's interface that compose.postgres.yaml uses: POSTGRES_USER / POSTGRES_PASSWORD /
# POSTGRES_DB create the role and database on first start, the data directory is
# /var/lib/postgresql/data (a volume), pg_isready answers on the default socket.
ARG BASE_IMAGE=debian:bookworm-slim
FROM ${BASE_IMAGE}
# postgresql-common first, told not to create a `main` cluster when the server package installs.
RUN apt-get update && apt-get install -y --no-install-recommends postgresql-common \
    && sed -ri 's/#(create_main_cluster) .*$/\1 = false/' \
         /etc/postgresql-common/createcluster.conf \
    && apt-get install -y --no-install-recommends postgresql-15 \
    && rm -rf /var/lib/apt/lists/* \
    && mkdir -p /var/lib/postgresql/data /var/run/postgresql \
    && chown postgres:postgres /var/lib/postgresql/data /var/run/postgresql \
    && chmod 700 /var/lib/postgresql/data
COPY postgres-entrypoint.sh /usr/local/bin/
ENV PATH=/usr/lib/postgresql/15/bin:$PATH PGDATA=/var/lib/postgresql/data
# A new named volume takes the ownership of this folder from the image, so the server never
# needs root.
USER postgres
STOPSIGNAL SIGINT
EXPOSE 5432
ENTRYPOINT ["postgres-entrypoint.sh"]
CMD ["postgres"]
