# One image for every pixflow process: `npm run api`, `npm run worker`, `npm run migrate`,
# `npm run simulator` (docker-compose.yml picks the command). TypeScript runs through tsx.
FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
COPY tools/temporal-test-server/package.json tools/temporal-test-server/package.json
RUN npm ci --omit=dev --no-audit --no-fund || npm ci --no-audit --no-fund
COPY . .
ENV NODE_ENV=production
# The processes need no write access to the code; they run unprivileged.
USER node
# API, worker metrics (ours, then the Temporal SDK's), acquirer simulator.
EXPOSE 3000 9100 9464 8090
CMD ["npm", "run", "api"]
