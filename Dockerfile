FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
COPY tools/temporal-test-server/package.json tools/temporal-test-server/package.json
RUN npm ci --omit=dev --no-audit --no-fund || npm ci --no-audit --no-fund
COPY . .
ENV NODE_ENV=production
EXPOSE 3000
CMD ["npm", "run", "api"]
