# The ECS worker image: `shoal worker` (lib/standalone/worker-process.ts), built by `cdk deploy`
# from the repository root for linux/arm64 (cdk/ecs-workers.ts). The CLI runs its TypeScript
# through tsx, a runtime dependency, so there is no build step.
FROM node:22.23.3-bookworm-slim

ENV NODE_ENV=production
WORKDIR /app

# Dependencies first: this layer is reused while only the sources change.
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

COPY tsconfig.json ./
COPY bin/ bin/
COPY lib/ lib/
COPY functions/ functions/
COPY examples/ examples/

# The image's own user (uid 1000), not root. Task working directories go to SHOAL_DATA_DIR
# (/tmp/shoal, set by the stack).
USER node

# SIGTERM reaches node directly (exec form); the worker hands running tasks back and exits.
ENTRYPOINT ["node", "bin/shoal.js", "worker"]
CMD ["--group", "ecs", "--concurrency", "4"]
