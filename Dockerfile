# Herald: one image for `herald gateway` and `herald worker` (see docker-compose.yml and the README's
# "Scaling out"). State lives in HERALD_HOME=/data: mount a volume there.

FROM node:20-bookworm-slim AS build
WORKDIR /app
# better-sqlite3 compiles from source when no prebuilt binary fits.
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
# API_SERVER_HOST=0.0.0.0 (with API_SERVER_KEY) is set for the gateway in docker-compose.yml only.
# MALLOC_ARENA_MAX: glibc keeps a malloc arena per thread that ever allocated (V8's compiler threads
# do); two are plenty for one event loop and save ~5 MB of RSS under load.
ENV NODE_ENV=production \
    HERALD_HOME=/data \
    MALLOC_ARENA_MAX=2
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# Bundled skills are SKILL.md folders, read at run time beside the build.
COPY --from=build /app/skills ./skills
RUN chmod +x dist/bundle/cli.js \
  && ln -s /app/dist/bundle/cli.js /usr/local/bin/herald \
  && mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8642
# `herald gateway` by default; the worker service runs `herald worker`. The heap flags are npm start's
# (see the README's "Running on a small machine").
ENTRYPOINT ["node", "--max-semi-space-size=2", "--heap-growing-percent=50", "/app/dist/bundle/cli.js"]
CMD ["gateway"]
