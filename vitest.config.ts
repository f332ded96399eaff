import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["tests/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Plugins import `herald/plugin` through a small package Herald writes into their node_modules;
    // vitest must transform it (it re-exports the TypeScript source) rather than hand it to Node.
    server: { deps: { inline: [/\/node_modules\/herald\//] } },
    reporters: ["default"],
  },
});
